// Statements per request, without and with custom auth (bench/auth/auth.ts): both runtimes in
// this process on a throw-away PostgreSQL, each request sent through fastify's inject, and every
// query a pg client sends on behalf of that request counted (an AsyncLocalStorage marks the
// request's work, so the workers' polls and the cron ticks do not count). The wall-clock bench
// (run.ts) shows what a statement costs; this shows where the statements are.
//
//   npx tsx bench/auth/statements.ts
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startPostgresServer } from '../../common/db/index.js';
import { createLogger } from '../../common/logging/index.js';
import { createRuntime, type Runtime } from '../../runtime/index.js';
import { REPO_ROOT } from '../http/servers.js';

const request = new AsyncLocalStorage<string[]>();
// Read off the prototype to wrap it; it is only ever called with `apply` on a client.
// eslint-disable-next-line @typescript-eslint/unbound-method
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const seen = request.getStore();
  if (seen) {
    const q = args[0] as string | { name?: string; text?: string };
    const text = typeof q === 'string' ? q : `${q.name ? `[${q.name}] ` : ''}${q.text ?? ''}`;
    seen.push(text.replace(/\s+/g, ' ').slice(0, 110));
  }
  return query.apply(this, args);
} as typeof pg.Client.prototype.query;

const CONFIGS = {
  'no auth': join(REPO_ROOT, 'examples', 'langgraph.json'),
  'custom auth': join(REPO_ROOT, 'bench', 'auth', 'langgraph.json'),
};
const HEADERS = { authorization: 'Bearer user-00', 'content-type': 'application/json' };
const PING = { assistant_id: 'echo', input: { messages: [{ role: 'user', content: 'ping' }] } };

async function send(rt: Runtime, method: 'GET' | 'POST', url: string, body?: unknown) {
  const res = await rt.app.inject({ method, url, headers: HEADERS, payload: JSON.stringify(body) });
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
  return JSON.parse(res.body) as Record<string, unknown>;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'graphdock-statements-'));
  const server = await startPostgresServer({ dataDir: join(dir, 'pg'), ephemeral: true });
  const runtimes: Runtime[] = [];
  try {
    for (const [side, configPath] of Object.entries(CONFIGS)) {
      const name = side.replace(' ', '_');
      const admin = new pg.Client({ connectionString: server.url });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      await admin.end();
      const rt = await createRuntime({
        configPath,
        databaseUrl: server.url.replace(/\/[^/]*$/, `/${name}`),
        apiKeys: [],
        logger: createLogger({ level: 'error' }),
      });
      runtimes.push(rt);
      const metadata = side === 'no auth' ? { owner: 'user-00' } : {};
      const threads: string[] = [];
      for (let i = 0; i < 4; i++)
        threads.push(String((await send(rt, 'POST', '/threads', { metadata })).thread_id));
      // Warm: prepared statements, the remembered assistant, loaded graphs.
      await send(rt, 'POST', `/threads/${threads[0]}/runs/wait`, PING);
      await send(rt, 'POST', '/threads/search', { limit: 10 });
      const cases: [string, 'GET' | 'POST', string, unknown][] = [
        ['thread search', 'POST', '/threads/search', { limit: 10 }],
        ['thread get', 'GET', `/threads/${threads[1]}`, undefined],
        ['thread state', 'GET', `/threads/${threads[1]}/state`, undefined],
        ['run (runs/wait)', 'POST', `/threads/${threads[2]}/runs/wait`, PING],
      ];
      for (const [label, method, url, body] of cases) {
        const seen: string[] = [];
        await request.run(seen, () => send(rt, method, url, body));
        console.log(`${side}, ${label}: ${seen.length} statements`);
        for (const s of seen) console.log(`    ${s}`);
      }
    }
  } finally {
    for (const rt of runtimes) await rt.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
