// `graphdock runtime` with GRAPHDOCK_WORKERS > 1: a primary process that only supervises N
// server processes (node:cluster) sharing its port. Each worker is a whole runtime, its own
// replica to the database (own queue worker id, leases, LISTEN connection), so N workers behave
// as N pods. The primary loads no runtime modules: it costs a few MiB, not a runtime's worth.
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../common/logging/index.js';

/** The environment variable that tells a forked worker its slot (1-based), for its logs. */
export const WORKER_INDEX_ENV = 'GRAPHDOCK_WORKER_INDEX';

/** Set in a worker process: its slot, or undefined in the primary and in a single process. */
export function workerIndex(): number | undefined {
  if (!cluster.isWorker) return undefined;
  const n = Number(process.env[WORKER_INDEX_ENV]);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

export interface SuperviseOptions {
  count: number;
  logger: Logger;
  /** Delay before a worker that died is started again; doubles while replacements keep dying. */
  restartDelayMs?: number;
}

const MAX_RESTART_DELAY_MS = 30_000;
/** A replacement that served this long resets the restart delay. */
const STABLE_MS = 10_000;

/**
 * Forks `count` workers and keeps them running: a worker that dies is replaced (its runs are
 * taken over by lease expiry, as with a pod that died). SIGTERM and SIGINT are passed on to every
 * worker, which drain and stop as a single process would; the primary exits when all have,
 * with 0 only if every worker stopped cleanly. A worker that fails before it first listens, at
 * start-up, fails the whole process (a bad config or a taken port is not retried forever).
 */
export function superviseWorkers(options: SuperviseOptions): Promise<number> {
  const { count, logger } = options;
  const baseDelay = options.restartDelayMs ?? 1000;
  let stopping: NodeJS.Signals | undefined;
  let exitCode = 0;
  let anyListened = false;
  let delay = baseDelay;
  const slots = new Map<Worker, { index: number; startedAt: number; listened: boolean }>();

  return new Promise<number>((resolve) => {
    const finishIfDone = () => {
      if (slots.size === 0) resolve(exitCode);
    };

    const fork = (index: number) => {
      const worker = cluster.fork({ [WORKER_INDEX_ENV]: String(index) });
      slots.set(worker, { index, startedAt: Date.now(), listened: false });
      worker.on('listening', () => {
        const slot = slots.get(worker);
        if (slot) slot.listened = true;
        anyListened = true;
      });
    };

    const stopAll = (signal: NodeJS.Signals) => {
      for (const worker of slots.keys()) if (!worker.isDead()) worker.process.kill(signal);
    };

    cluster.on('exit', (worker, code, signal) => {
      const slot = slots.get(worker);
      if (!slot) return;
      slots.delete(worker);
      const status = code ?? 1;
      if (stopping) {
        // Killed by the signal passed on: one still starting, with nothing to drain yet.
        const clean = status === 0 || signal === stopping;
        if (!clean && exitCode === 0) exitCode = status;
        return finishIfDone();
      }
      if (!slot.listened && !anyListened) {
        // Start-up failure: its own stderr says why; stop the others and report it.
        logger.error({ worker: slot.index, code, signal }, 'worker failed to start');
        exitCode = status === 0 ? 1 : status;
        stopping = 'SIGTERM';
        stopAll('SIGTERM');
        return finishIfDone();
      }
      // At once after a worker that served a while; with a growing delay while they keep dying.
      const stable = Date.now() - slot.startedAt >= STABLE_MS;
      if (stable) delay = baseDelay;
      const wait = stable ? 0 : delay;
      if (!stable) delay = Math.min(delay * 2, MAX_RESTART_DELAY_MS);
      logger.error(
        { worker: slot.index, pid: worker.process.pid, code, signal, restartInMs: wait },
        'worker died; starting a new one',
      );
      setTimeout(() => {
        if (!stopping) fork(slot.index);
      }, wait).unref();
    });

    // Kept installed: a terminal's Ctrl-C reaches the workers too, and a second one must not
    // kill the primary while they drain.
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = signal;
      logger.info({ signal, workers: slots.size }, 'stopping workers');
      stopAll(signal);
      finishIfDone();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);

    for (let i = 1; i <= count; i++) fork(i);
  });
}
