// A replica killed (SIGKILL) while `run.start` commands pour in, some creating their thread and
// some on threads that exist: every run it acknowledged, and every run it inserted without having
// answered, is executed to its end by the replica that is left. None is lost or run twice, and
// every thread a run created carries the run's graph.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { useReplicas } from '../support/fixture.js';
import { postCommand } from '../support/protocol.js';
import { REPO_ROOT } from '../support/server.js';

const CONFIG = `${REPO_ROOT}/test/fixtures/protocol/langgraph.json`;
const env = { GRAPHDOCK_RUN_LEASE_SECS: '2' };

const replicas = useReplicas({ config: CONFIG, env });

async function runStart(url: string, threadId: string): Promise<string | undefined> {
  const { body } = await postCommand(url, threadId, {
    id: 1,
    method: 'run.start',
    params: { assistant_id: 'slow', input: { ticks: 4 } },
  });
  return body.type === 'success'
    ? (body.result as { run_id?: string } | undefined)?.run_id
    : undefined;
}

describe('a replica killed while run.start commands create and lock threads', () => {
  it('leaves every run it acknowledged or inserted to the other replica, each run once', async () => {
    const doomed = await replicas.start();
    const survivor = await replicas.start();
    // Threads that exist already (each has had a run): the runs below lock them.
    const existing = Array.from({ length: 10 }, () => randomUUID());
    for (const id of existing) expect(await runStart(survivor.url, id)).toBeDefined();
    // The doomed replica has loaded the graph: the commands below do not wait for that.
    expect(await runStart(doomed.url, randomUUID())).toBeDefined();
    const fresh = Array.from({ length: 30 }, () => randomUUID());
    const targets = [...fresh, ...existing, ...existing];
    const acked: string[] = [];
    const sent = targets.map((id, i) =>
      new Promise((r) => setTimeout(r, i * 5))
        .then(() => runStart(doomed.url, id))
        .then((runId) => runId && acked.push(runId))
        .catch(() => undefined),
    );
    // Killed with commands still arriving, and the runs it acknowledged executing (four ticks of
    // 50 ms each).
    const killAt = Date.now() + 10_000;
    while (acked.length < 3 && Date.now() < killAt) await new Promise((r) => setTimeout(r, 5));
    await doomed.stop('SIGKILL');
    await Promise.all(sent);
    expect(acked.length).toBeGreaterThanOrEqual(3);

    const sql = new pg.Client({ connectionString: replicas.db.url });
    await sql.connect();
    try {
      const threadIds = [...new Set(targets)];
      type Row = { run_id: string; thread_id: string; status: string; attempts: number };
      const runs = async () =>
        (
          await sql.query<Row>(
            `SELECT run_id, thread_id, status, attempt AS attempts FROM runs WHERE thread_id = ANY($1::uuid[])`,
            [threadIds],
          )
        ).rows;
      const deadline = Date.now() + 60_000;
      let rows = await runs();
      while (rows.some((r) => r.status !== 'success') && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        rows = await runs();
      }
      // Every run ended well, the acknowledged ones among them; the ten first runs are there too.
      // The kill came mid-way: commands were left unanswered, and runs were taken over.
      expect(acked.length).toBeLessThan(targets.length);
      expect(rows.filter((r) => r.attempts > 1).length).toBeGreaterThan(0);
      expect(rows.filter((r) => r.status !== 'success')).toEqual([]);
      const ids = new Set(rows.map((r) => r.run_id));
      for (const runId of acked) expect(ids.has(runId)).toBe(true);
      expect(rows.length).toBeGreaterThanOrEqual(10 + acked.length);
      // Each run executed to one end: its checkpoints name it once per step, not twice over.
      const checkpoints = await sql.query<{ run_id: string; n: number }>(
        `SELECT metadata->>'run_id' AS run_id, count(*)::int AS n FROM checkpoints
          WHERE thread_id = ANY($1::text[]) AND checkpoint_ns = '' GROUP BY 1`,
        [threadIds],
      );
      for (const { n } of checkpoints.rows) expect(n).toBeLessThanOrEqual(3);
      // A thread exists for every run, created once, with the graph its first run set.
      const threads = await sql.query<{ thread_id: string; graph_id: string; status: string }>(
        `SELECT thread_id, metadata->>'graph_id' AS graph_id, status FROM threads
          WHERE thread_id = ANY($1::uuid[])`,
        [threadIds],
      );
      const withRuns = new Set(rows.map((r) => r.thread_id));
      expect(threads.rows.filter((t) => withRuns.has(t.thread_id))).toHaveLength(withRuns.size);
      for (const t of threads.rows) {
        expect(t.graph_id).toBe('slow');
        if (withRuns.has(t.thread_id)) expect(t.status).toBe('idle');
      }
    } finally {
      await sql.end();
    }
  }, 120_000);
});
