// EXPLAIN ANALYZE of the thread searches bench/auth compares, on the data it seeds (threads of 20
// owners, created through the auth server so the handler sets metadata.owner): the statement each
// search sends is captured and explained with its own parameters, then timed in a loop.
//
//   npx tsx bench/auth/plans.ts [--threads 1000] [--loops 300]
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startPostgresServer } from '../../common/db/index.js';
import { createLogger } from '../../common/logging/index.js';
import { createRuntime } from '../../runtime/index.js';
import { ThreadStore } from '../../runtime/threads/index.js';
import { REPO_ROOT } from '../http/servers.js';

const { values: args } = parseArgs({
  options: {
    threads: { type: 'string', default: '1000' },
    loops: { type: 'string', default: '300' },
    analyze: { type: 'boolean', default: false },
  },
});
const OWNERS = 20;

interface Captured {
  text: string;
  values: unknown[];
}
const capture = new AsyncLocalStorage<Captured[]>();
// eslint-disable-next-line @typescript-eslint/unbound-method
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
  const seen = capture.getStore();
  if (seen) {
    const q = a[0] as string | { text: string; values?: unknown[] };
    if (typeof q === 'string') seen.push({ text: q, values: (a[1] as unknown[]) ?? [] });
    else seen.push({ text: q.text, values: q.values ?? [] });
  }
  return query.apply(this, a);
} as typeof pg.Client.prototype.query;

const dir = mkdtempSync(join(tmpdir(), 'graphdock-plans-'));
const server = await startPostgresServer({ dataDir: join(dir, 'pg'), ephemeral: true });
const rt = await createRuntime({
  configPath: join(REPO_ROOT, 'bench', 'auth', 'langgraph.json'),
  databaseUrl: server.url,
  apiKeys: [],
  logger: createLogger({ level: 'error' }),
});
const send = async (user: string, url: string, body: unknown) => {
  const res = await rt.app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${user}`, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
  return res.body;
};
const db = new pg.Client({ connectionString: server.url });
await db.connect();
try {
  for (let i = 0; i < Number(args.threads); i++)
    await send(`user-${String(i % OWNERS).padStart(2, '0')}`, '/threads', { metadata: {} });
  if (args.analyze) await db.query('ANALYZE threads');
  const cases: [string, unknown][] = [
    ['auth filter (owner), 10 newest', { limit: 10 }],
    ['auth filter + app filter on owner', { limit: 10, metadata: { owner: 'user-00' } }],
    ['auth filter, sort by updated_at', { limit: 10, sort_by: 'updated_at' }],
  ];
  const statements: [string, Captured][] = [];
  for (const [label, body] of cases) {
    const seen: Captured[] = [];
    await capture.run(seen, () => send('user-00', '/threads/search', body));
    const search = seen.find((s) => /FROM threads/.test(s.text));
    if (search) statements.push([label, search]);
  }
  // The unfiltered search, as the server without auth sends it.
  const pool = new pg.Pool({ connectionString: server.url, max: 1 });
  const unfiltered: Captured[] = [];
  await capture.run(unfiltered, () =>
    new ThreadStore(pool).search({ limit: 10, offset: 0, sortBy: 'created_at', sortOrder: 'desc' }),
  );
  await pool.end();
  statements.unshift(['no filter, 10 newest', unfiltered[0]!]);
  for (const [label, s] of statements) {
    console.log(`\n## ${label}\n${s.text.replace(/\s+/g, ' ')}\n-- ${JSON.stringify(s.values)}`);
    const plan = await db.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, BUFFERS) ${s.text}`,
      s.values,
    );
    for (const row of plan.rows) console.log(row['QUERY PLAN']);
  }
  // Interleaved timing of each statement, as the server runs it (a named statement per case).
  const took = new Map<string, number[]>();
  for (let i = 0; i < Number(args.loops); i++)
    for (const [label, s] of statements) {
      const t = performance.now();
      await db.query({ name: label.slice(0, 60), text: s.text, values: s.values });
      if (i >= 20) took.set(label, [...(took.get(label) ?? []), performance.now() - t]);
    }
  console.log('\nmedian ms per statement (named, interleaved):');
  for (const [label, xs] of took) {
    const m = [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
    console.log(`  ${label}: ${m.toFixed(3)}`);
  }
} finally {
  await db.end();
  await rt.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
