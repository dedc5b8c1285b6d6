// Gives memory back while the process is idle. The image runs node with --no-memory-reducer: V8's
// own reducer shrank the heap after a few seconds without work and the next burst spent its first
// seconds growing it again (docs/performance.md). Without the reducer nothing shrinks the young
// generation that the start's module loading grew to its maximum, 40-50 MiB of an idle runtime's
// RSS. This trims once when the process first goes quiet after its start, and again only after
// a long idle period, so bursts a few seconds apart keep their heap.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Logger } from '../logging/index.js';

export interface IdleTrimPolicyOptions {
  /** Idle ticks (seconds) after work before a trim. */
  idleTicks: number;
  /** Idle ticks before the first trim after the start. */
  startIdleTicks: number;
  /** A tick whose event loop was busy for less than this (ms) is idle. */
  idleBusyMs: number;
  /**
   * Busy time (ms) since the last trim that makes another worth doing: a server's own
   * housekeeping (polls, lease renewals, sweeps) breaks an idle period on a loaded machine now
   * and then, and alone it should not bring a trim every few seconds.
   */
  workMs: number;
}

/**
 * When to trim, from the event loop's busy time in each tick: after `startIdleTicks` idle ticks
 * the first time, then after `idleTicks` idle ticks that follow at least `workMs` of work.
 */
export class IdleTrimPolicy {
  private idle = 0;
  private workSinceTrim = 0;
  private trimmedOnce = false;

  constructor(private readonly options: IdleTrimPolicyOptions) {}

  /** Takes the last tick's busy milliseconds; true when the process should trim now. */
  tick(busyMs: number): boolean {
    if (busyMs >= this.options.idleBusyMs) {
      this.idle = 0;
      this.workSinceTrim += busyMs;
      return false;
    }
    this.idle++;
    const needed = this.trimmedOnce ? this.options.idleTicks : this.options.startIdleTicks;
    if (this.idle < needed) return false;
    if (this.trimmedOnce && this.workSinceTrim < this.options.workMs) return false;
    this.workSinceTrim = 0;
    this.trimmedOnce = true;
    return true;
  }
}

type Collect = () => void;

const LAST_RESORT = { type: 'major', execution: 'sync', flavor: 'last-resort' } as const;

/**
 * V8's last-resort collection (every space compacted, the young generation shrunk to its
 * minimum), reached without --expose-gc on the command line: the flag is set only while one new
 * context is made, so no user code gets a global `gc`. Node.js 20's V8 ignores the flavour and
 * runs a plain full collection, which leaves the young generation as it is. Undefined when this
 * V8 no longer takes flags at run time.
 */
export function lastResortCollector(): Collect | undefined {
  const exposed = globalThis.gc;
  if (exposed) return () => exposed(LAST_RESORT);
  let gc: ((options?: object) => void) | undefined;
  try {
    v8.setFlagsFromString('--expose-gc');
    gc = vm.runInNewContext('typeof gc === "function" ? gc : undefined') as typeof gc;
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
  return gc && (() => gc(LAST_RESORT));
}

const TICK_MS = 1000;
const START_IDLE_TICKS = 1;
/**
 * A tick is idle when its event loop was busy under 5% of it. An idle runtime's own work (the
 * run, webhook and cron polls, the metrics' event loop monitor) keeps it busy 10-35 ms a second
 * on a 2-core VM, so a threshold of 2% missed the first trim in about one start in four.
 */
const IDLE_BUSY_MS = 50;
/** About twenty stateful runs' worth of the event loop's time. */
const WORK_MS = 100;

export interface IdleTrimOptions {
  /** Seconds of idleness after activity before a trim; 0 turns trimming off. */
  idleSeconds: number;
  logger: Logger;
}

export interface IdleTrim {
  stop(): void;
}

const MiB = 2 ** 20;
const newSpaceBytes = () =>
  v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;

export function startIdleTrim(options: IdleTrimOptions): IdleTrim {
  const off: IdleTrim = { stop: () => undefined };
  if (options.idleSeconds <= 0) return off;
  const policy = new IdleTrimPolicy({
    idleTicks: Math.max(1, Math.round((options.idleSeconds * 1000) / TICK_MS)),
    startIdleTicks: START_IDLE_TICKS,
    idleBusyMs: IDLE_BUSY_MS,
    workMs: WORK_MS,
  });
  const collect = lastResortCollector();
  if (!collect) {
    options.logger.warn('idle memory trim unavailable: this V8 does not expose its collector');
    return off;
  }
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const { active } = performance.eventLoopUtilization(now, last);
    last = now;
    if (!policy.tick(active)) return;
    const rssBefore = process.memoryUsage.rss();
    const newSpaceBefore = newSpaceBytes();
    const started = performance.now();
    collect();
    options.logger.debug(
      {
        ms: Math.round(performance.now() - started),
        rssMiB: [rssBefore, process.memoryUsage.rss()].map((b) => Math.round(b / MiB)),
        newSpaceMiB: [newSpaceBefore, newSpaceBytes()].map((b) => +(b / MiB).toFixed(1)),
      },
      'idle: memory trimmed',
    );
    // The collection's own time is not activity.
    last = performance.eventLoopUtilization();
  }, TICK_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
