// A keyed work queue in the manner of client-go's: a key queued twice is queued once, a key is
// never processed by two workers at once (a key added while in flight runs once more after),
// and failures come back after an exponentially growing delay.
export interface WorkQueueOptions {
  baseDelayMs?: number;
  maxDelayMs?: number;
  onDepth?: (depth: number) => void;
  onAdd?: () => void;
  onRetry?: () => void;
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly delayed = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private shuttingDown = false;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(private readonly options: WorkQueueOptions = {}) {
    this.baseDelayMs = options.baseDelayMs ?? 5;
    this.maxDelayMs = options.maxDelayMs ?? 30_000;
  }

  get depth(): number {
    return this.queue.length;
  }

  add(key: string): void {
    if (this.shuttingDown) return;
    this.options.onAdd?.();
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    const waiter = this.waiters.shift();
    if (waiter) {
      this.processing.add(key);
      waiter(key);
      return;
    }
    this.queued.add(key);
    this.queue.push(key);
    this.options.onDepth?.(this.queue.length);
  }

  /** Adds the key after `ms`; an earlier pending time wins, as in client-go's delaying queue. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const at = Date.now() + ms;
    const pending = this.delayed.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    timer.unref();
    this.delayed.set(key, { at, timer });
  }

  /** Requeues after the key's next backoff delay (5 ms, 10 ms, 20 ms, ... capped). */
  addRateLimited(key: string): void {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    this.options.onRetry?.();
    this.addAfter(key, Math.min(this.baseDelayMs * 2 ** n, this.maxDelayMs));
  }

  /** Resets the key's backoff (after a success). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** Resolves to the next key to process, or undefined once shut down. */
  get(): Promise<string | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) {
      this.queued.delete(key);
      this.processing.add(key);
      this.options.onDepth?.(this.queue.length);
      return Promise.resolve(key);
    }
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks the key processed; if it was added meanwhile, it is queued again. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.delete(key)) this.add(key);
  }

  shutDown(): void {
    this.shuttingDown = true;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
  }
}
