// Periodic deletion of expired data (threads with their checkpoints, store items). Every replica
// sweeps; the sweeps themselves skip rows another replica has locked, so they never collide.
import type { Logger } from '../../common/logging/index.js';

export interface Sweep {
  name: string;
  intervalMs: number;
  /** Deletes one batch of expired data; returns how many records went. */
  run(): Promise<number>;
}

export function startSweepers(sweeps: Sweep[], logger: Logger): () => void {
  const timers = sweeps.map((sweep) => {
    let running = false;
    const timer = setInterval(() => {
      // A slow sweep is never overlapped by the next tick.
      if (running) return;
      running = true;
      sweep
        .run()
        .then(
          (n) => n && logger.info({ swept: n, sweep: sweep.name }, 'expired records swept'),
          (err: unknown) => logger.warn({ err, sweep: sweep.name }, 'TTL sweep failed'),
        )
        .finally(() => (running = false));
    }, sweep.intervalMs);
    timer.unref();
    return timer;
  });
  return () => timers.forEach((t) => clearInterval(t));
}
