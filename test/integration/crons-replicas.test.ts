// Crons on several server processes sharing one database: every due time yields exactly one
// run while replicas start, stop and crash, and a cron overdue after downtime fires once.
import { Client, type Run } from '@langchain/langgraph-sdk';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { useReplicas } from '../support/fixture.js';
import type { RunningServer } from '../support/server.js';

const hi = (content: string) => ({ messages: [{ role: 'user', content }] });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const env = { GRAPHDOCK_CRON_TICK_MS: '50', LOG_LEVEL: 'info' };

const replicas = useReplicas({ env });

async function replica(): Promise<{ server: RunningServer; client: Client }> {
  const s = await replicas.start();
  return { server: s, client: new Client({ apiUrl: s.url, apiKey: null }) };
}

const scheduledFor = (run: Run) =>
  (run as Run & { kwargs: { scheduled_for: string } }).kwargs.scheduled_for;

async function sql<T extends pg.QueryResultRow>(text: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: replicas.db.url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

describe('crons on replicas', () => {
  it('fires each due time exactly once while replicas run, crash and join', async () => {
    const a = await replica();
    const b = await replica();
    const threads = await Promise.all([1, 2, 3].map(() => a.client.threads.create()));
    const crons = await Promise.all(
      threads.map((t, i) =>
        a.client.crons.createForThread(t.thread_id, 'echo', {
          schedule: '* * * * * *',
          input: hi(`cron ${i}`),
        }),
      ),
    );
    await sleep(3000);
    // One replica dies without warning (possibly inside a firing transaction); another joins.
    await a.server.stop('SIGKILL');
    const killedAt = Date.now();
    const c = await replica();
    await sleep(3000);
    await b.server.stop();
    await sleep(2000);
    for (const cron of crons) await c.client.crons.delete(cron.cron_id);
    const stoppedAt = Date.now();

    let total = 0;
    for (const thread of threads) {
      const runs = await c.client.runs.list(thread.thread_id, { limit: 1000 });
      const times = runs.map(scheduledFor);
      // No due time fired twice...
      expect(new Set(times).size).toBe(times.length);
      // ...and the schedule kept firing through the crash, on whichever replica was alive.
      expect(times.length).toBeGreaterThanOrEqual(4);
      expect(times.some((t) => Date.parse(t) > killedAt)).toBe(true);
      for (const t of times) expect(Date.parse(t)).toBeLessThanOrEqual(stoppedAt);
      total += times.length;
    }
    // The database agrees: one run row per (cron, due time).
    const [dupes] = await sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM (
         SELECT kwargs->>'cron_id', kwargs->>'scheduled_for' FROM runs
         WHERE kwargs ? 'cron_id' GROUP BY 1, 2 HAVING count(*) > 1) AS d`,
    );
    expect(dupes?.n).toBe(0);
    // Every firing is logged by the replica that made it (a killed one may lose its last lines);
    // more than one replica took part.
    const firedBy = replicas.servers.map(
      (s) => s.output().match(/"msg":"cron fired"/g)?.length ?? 0,
    );
    const fired = firedBy.reduce((n, f) => n + f, 0);
    expect(firedBy.filter((f) => f > 0).length).toBeGreaterThanOrEqual(2);
    expect(fired).toBeLessThanOrEqual(total);
  }, 90_000);

  it('fires a cron overdue after downtime once, for its earliest missed time, then resumes', async () => {
    const first = await replica();
    const thread = await first.client.threads.create();
    const cron = await first.client.crons.createForThread(thread.thread_id, 'echo', {
      schedule: '* * * * *',
      input: hi('catch up'),
    });
    await first.server.stop();
    // A regular firing just before the stop (a minute boundary) is not part of the catch-up.
    const beforeDowntime = new Set(
      (
        await sql<{ run_id: string }>('SELECT run_id FROM runs WHERE thread_id = $1', [
          thread.thread_id,
        ])
      ).map((r) => r.run_id),
    );
    // Every replica was down for an hour: sixty due times passed.
    const [{ missed } = { missed: '' }] = await sql<{ missed: Date }>(
      `UPDATE crons SET next_run_date = date_trunc('minute', now()) - interval '1 hour'
       WHERE cron_id = $1 RETURNING next_run_date AS missed`,
      [cron.cron_id],
    );
    // Taken before the replica starts: a regular firing may happen while it is starting.
    const restartedAt = Date.now();
    const second = await replica();
    let runs: Run[] = [];
    for (let i = 0; i < 200 && runs.length === 0; i++) {
      runs = (await second.client.runs.list(thread.thread_id)).filter(
        (r) => !beforeDowntime.has(r.run_id),
      );
      await sleep(100);
    }
    await sleep(1500); // room for wrongly repeated catch-up firings to show up
    runs = (await second.client.runs.list(thread.thread_id, { limit: 100 })).filter(
      (r) => !beforeDowntime.has(r.run_id),
    );
    // Catch-up firings are those due before the restart: exactly one, the earliest missed. A
    // minute boundary passing during the test may legitimately add the next regular firing.
    const due = runs.map(scheduledFor);
    expect(due.filter((at) => Date.parse(at) < restartedAt)).toEqual([
      new Date(missed).toISOString(),
    ]);
    expect(due.filter((at) => Date.parse(at) >= restartedAt).length).toBeLessThanOrEqual(1);
    const after = (await (
      await fetch(`${second.server.url}/runs/crons/${cron.cron_id}`)
    ).json()) as {
      next_run_date: string;
    };
    const next = Date.parse(after.next_run_date);
    // The schedule resumed on its grid: the next due minute after now, not a missed one.
    expect(next).toBeGreaterThan(restartedAt - 1000);
    expect(next - Date.now()).toBeLessThanOrEqual(61_000);
    expect(new Date(next).getUTCSeconds()).toBe(0);
    await second.client.crons.delete(cron.cron_id);
  }, 60_000);
});
