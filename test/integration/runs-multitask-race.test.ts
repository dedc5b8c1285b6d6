// Runs created at once on one thread with the `interrupt` and `rollback` strategies, each new one
// cancelling those before it: never a 500, and no run fails. Creating such a run locks its thread
// and then the runs it cancels, while a run that ends locks its own row and then its thread: the
// two deadlocked (PostgreSQL's `deadlock detected`), failing 80 in 100 of these requests and, when
// the ending run was the one PostgreSQL gave up, that run too.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useRuntime } from '../support/fixture.js';

const rt = useRuntime({ env: { GRAPHDOCK_SLOW_STEP_MS: '200', N_JOBS_PER_WORKER: '20' } });
const ROUNDS = 5;
const AT_ONCE = 20;
const tally = (all: Record<string, number>, key: string) => (all[key] = (all[key] ?? 0) + 1);

describe.each(['interrupt', 'rollback'] as const)(
  '%s: runs created at once on one thread',
  (strategy) => {
    it(`answer 200 in ${ROUNDS} rounds of ${AT_ONCE}, and none fails`, async () => {
      const statuses: Record<string, number> = {};
      const runs: Record<string, number> = {};
      for (let round = 0; round < ROUNDS; round++) {
        const threadId = randomUUID();
        const answers = await Promise.all(
          Array.from({ length: AT_ONCE }, (_, i) =>
            rt.http(`/threads/${threadId}/runs/wait`, {
              method: 'POST',
              json: {
                assistant_id: 'slow',
                input: { messages: [{ role: 'user', content: `${round}.${i}` }] },
                if_not_exists: 'create',
                multitask_strategy: strategy,
              },
            }),
          ),
        );
        for (const res of answers) tally(statuses, String(res.status));
        for (const run of await rt.client.runs.list(threadId, { limit: 100 }))
          tally(runs, run.status);
        expect((await rt.client.threads.get(threadId)).status).toBe('idle');
      }
      expect(statuses).toEqual({ 200: ROUNDS * AT_ONCE });
      // Every run ran to its end or was cancelled by a later one (and, with `rollback`, deleted);
      // the last of each round always ends.
      const { success = 0, interrupted = 0, ...others } = runs;
      expect(others).toEqual({});
      expect(success).toBeGreaterThanOrEqual(ROUNDS);
      if (strategy === 'interrupt') expect(success + interrupted).toBe(ROUNDS * AT_ONCE);
      else expect(interrupted).toBe(0);
    }, 120_000);
  },
);
