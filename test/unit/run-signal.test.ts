// The signal a run executes under: cancelled with the worker's reason, timed out with
// `timedOut` set, and, once disposed, no longer reachable from timers or its cancel signal, so
// a finished run's objects can be collected long before its timeout would have fired.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { RunSignal } from '../../runtime/runs/run-signal.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('RunSignal', () => {
  it("aborts with the cancel signal's reason", () => {
    const cancel = new AbortController();
    const run = new RunSignal(cancel.signal, 60_000);
    cancel.abort('rollback');
    expect(run.signal.aborted).toBe(true);
    expect(run.signal.reason).toBe('rollback');
    expect(run.timedOut).toBe(false);
    run.dispose();
  });

  it('starts aborted when its cancel signal already is', () => {
    const cancel = new AbortController();
    cancel.abort('shutdown');
    expect(new RunSignal(cancel.signal, 60_000).signal.reason).toBe('shutdown');
  });

  it('times out with a TimeoutError, and says so', async () => {
    const run = new RunSignal(new AbortController().signal, 10);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(run.signal.aborted).toBe(true);
    expect((run.signal.reason as DOMException).name).toBe('TimeoutError');
    expect(run.timedOut).toBe(true);
  });

  it('is not aborted by its cancel signal after dispose', () => {
    const cancel = new AbortController();
    const run = new RunSignal(cancel.signal, 60_000);
    run.dispose();
    cancel.abort('interrupt');
    expect(run.signal.aborted).toBe(false);
  });

  it('can be collected once disposed, though listeners remain on it and its timeout is far', async () => {
    const cancel = new AbortController();
    const finishedRun = () => {
      const run = new RunSignal(cancel.signal, 3_600_000);
      // As a graph library does: listeners it never removes.
      run.signal.addEventListener('abort', () => undefined);
      run.dispose();
      return new WeakRef(run.signal);
    };
    const refs = Array.from({ length: 10 }, finishedRun);
    await nextTurn();
    gc();
    await nextTurn();
    gc();
    expect(refs.filter((r) => r.deref() !== undefined)).toHaveLength(0);
  });
});
