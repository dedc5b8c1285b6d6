// What custom auth costs in statements: a filtered thread search and the reads of one thread
// send as many statements as without auth, the filter applied by the statement itself. The
// runtime runs in this process so that every query a request sends can be counted.
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../common/logging/index.js';
import { createRuntime, type Runtime } from '../../runtime/index.js';
import { observeClientQueries } from '../support/counting-pool.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { REPO_ROOT } from '../support/server.js';

const dir = mkdtempSync(join(tmpdir(), 'graphdock-auth-statements-'));
const config = join(dir, 'langgraph.json');
writeFileSync(
  config,
  JSON.stringify({
    graphs: { echo: join(REPO_ROOT, 'examples', 'graphs', 'echo.ts:graph') },
    auth: { path: `${join(REPO_ROOT, 'test', 'fixtures', 'auth', 'auth.ts')}:auth` },
  }),
);

const request = new AsyncLocalStorage<string[]>();

let db: TestDatabase;
let rt: Runtime;
let restoreQuery: (() => void) | undefined;
beforeAll(async () => {
  restoreQuery = observeClientQueries((q) =>
    request.getStore()?.push(typeof q === 'string' ? q : (q.text ?? '')),
  );
  db = await createTestDatabase(inject('pgAdminUrl'));
  rt = await createRuntime({
    configPath: config,
    databaseUrl: db.url,
    apiKeys: [],
    logger: createLogger({ level: 'error' }),
  });
});
afterAll(async () => {
  restoreQuery?.();
  await rt?.close();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** Status and statements sent of one request as `token`'s user. */
async function send(token: string, method: 'GET' | 'POST', url: string, body?: unknown) {
  const statements: string[] = [];
  // inject's answer starts the request once awaited: awaited inside, so the queries count.
  const res = await request.run(statements, async () =>
    rt.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    }),
  );
  return { status: res.statusCode, body: res.body, statements };
}

describe('custom auth statements', () => {
  it('a filtered search and the reads of one thread are one statement each, hidden or not', async () => {
    const created = await send('token-alice', 'POST', '/threads', {});
    const id = (JSON.parse(created.body) as { thread_id: string }).thread_id;
    // Warm: the first requests also prepare statements and load the graph.
    await send('token-alice', 'POST', '/threads/search', {});
    await send('token-alice', 'GET', `/threads/${id}`);

    const search = await send('token-alice', 'POST', '/threads/search', { limit: 5 });
    expect(search.status).toBe(200);
    expect((JSON.parse(search.body) as { thread_id: string }[]).map((t) => t.thread_id)).toEqual([
      id,
    ]);
    expect(search.statements).toHaveLength(1);
    const hidden = await send('token-bob', 'POST', '/threads/search', { limit: 5 });
    expect([JSON.parse(hidden.body), hidden.statements.length]).toEqual([[], 1]);

    for (const [method, path] of [
      ['GET', ''],
      ['GET', '/state'],
      ['GET', '/history'],
      ['POST', '/history'],
      ['POST', '/state/checkpoint'],
    ] as const) {
      const body = method === 'POST' ? { checkpoint: {} } : undefined;
      const mine = await send('token-alice', method, `/threads/${id}${path}`, body);
      expect([path, mine.status, mine.statements.length]).toEqual([path, 200, 1]);
      const theirs = await send('token-bob', method, `/threads/${id}${path}`, body);
      expect([path, theirs.status, theirs.statements.length]).toEqual([path, 404, 1]);
    }
  });
});
