// Fenced writes. Every write a run makes names the lease it holds on the run (worker and attempt);
// the statement checks it, locking the run row FOR SHARE, so a takeover (which updates that row)
// waits for the write to commit, and a write that comes after the takeover writes nothing. A
// worker frozen past its lease (GC pause, SIGSTOP, a stalled VM) thus cannot overwrite the work
// of the worker that took its run over.
import type { EmbeddedStatement } from './sql.js';

/** The condition that embedded statements (`sql(first, onlyIf)`) take for a fenced statement. */
export const LEASE_HELD = 'EXISTS (SELECT 1 FROM lease)';

/**
 * A run's lease as a read for a statement's `lease` CTE: one row while the lease holds. `onLost`
 * is called by whoever finds it lost, before throwing LeaseLostError (the run then stops).
 */
export interface RunFence extends EmbeddedStatement {
  runId: string;
  onLost?: () => void;
}

/** The lease on a run was taken over by another worker: nothing was written. */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';
  constructor(readonly runId: string) {
    super(`run ${runId} was taken over by another worker: its write was refused`);
  }
}

export function isLeaseLost(err: unknown): err is LeaseLostError {
  return err instanceof LeaseLostError;
}

/** The error to throw once a fenced write found its lease gone; tells the fence's owner first. */
export function leaseLost(fence: { runId: string; onLost?: () => void }): LeaseLostError {
  fence.onLost?.();
  return new LeaseLostError(fence.runId);
}

/**
 * `statements` (embedded ones that honour `onlyIf`) as one statement that writes only while
 * `fence` holds; its one row says whether it did (`held`).
 */
export function fencedStatement(
  fence: RunFence,
  statements: EmbeddedStatement[],
): { text: string; values: unknown[] } {
  const values: unknown[] = [...fence.values];
  const ctes = statements.map((statement, i) => {
    const cte = `w${i} AS (${statement.sql(values.length + 1, LEASE_HELD)})`;
    values.push(...statement.values);
    return cte;
  });
  return {
    text: `WITH lease AS (${fence.sql(1)})${ctes.map((c) => `, ${c}`).join('')}
      SELECT ${LEASE_HELD} AS held`,
    values,
  };
}
