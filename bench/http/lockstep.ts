// Measures one operation on every server in turn, window by window (A, B, A, B, ...), with both
// servers running. The machine's speed drifts over minutes on a shared VM; interleaving makes
// every comparison happen under the same conditions.
import type { LoadResult } from './load.js';

/** One run of the operation; `record` is false for the warm-up. */
export type Window = (record: boolean) => Promise<LoadResult>;

interface Entry {
  party: string;
  window: Window;
  resolve: (windows: LoadResult[]) => void;
  reject: (err: unknown) => void;
}

export interface LockstepOptions {
  repeats: number;
  warmup: boolean;
  /**
   * Pause before an operation and after every window of a `settleAfter` party: the baseline
   * persists its whole store a few seconds after a burst of requests, for seconds at 100,000
   * threads, and that must not land in another window.
   */
  settleMs: number;
  settleAfter: string[];
  /** Runs around each window of `party`: e.g. freezes the other servers meanwhile. */
  around?: (party: string, window: () => Promise<LoadResult>) => Promise<LoadResult>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Lockstep {
  private readonly active: Set<string>;
  private readonly waiting = new Map<string, { writes: boolean; entries: Entry[] }>();

  constructor(
    private readonly order: string[],
    private readonly options: LockstepOptions,
  ) {
    this.active = new Set(order);
  }

  /** Resolves with this party's measured windows once every active party has run them. */
  measure(party: string, op: string, window: Window, writes: boolean): Promise<LoadResult[]> {
    return new Promise((resolve, reject) => {
      const slot = this.waiting.get(op) ?? { writes, entries: [] };
      slot.entries.push({ party, window, resolve, reject });
      this.waiting.set(op, slot);
      this.startReady();
    });
  }

  /** A party that failed stops taking part; nobody waits for it any more. */
  leave(party: string): void {
    this.active.delete(party);
    this.startReady();
  }

  private startReady(): void {
    for (const [op, slot] of this.waiting) {
      if (slot.entries.length >= this.active.size && slot.entries.length > 0) {
        this.waiting.delete(op);
        void this.run(slot.writes, slot.entries);
      }
    }
  }

  private async run(writes: boolean, entries: Entry[]): Promise<void> {
    entries.sort((a, b) => this.order.indexOf(a.party) - this.order.indexOf(b.party));
    const results = new Map<string, LoadResult[]>(entries.map((e) => [e.party, []]));
    try {
      await sleep(this.options.settleMs);
      const once = async (e: Entry, record: boolean) => {
        const around = this.options.around ?? ((_party, fn) => fn());
        const result = await around(e.party, () => e.window(record));
        if (writes || this.options.settleAfter.includes(e.party))
          await sleep(this.options.settleMs);
        return result;
      };
      if (this.options.warmup) for (const e of entries) await once(e, false);
      for (let i = 0; i < this.options.repeats; i++) {
        for (const e of entries) results.get(e.party)?.push(await once(e, true));
      }
      for (const e of entries) e.resolve(results.get(e.party) ?? []);
    } catch (err) {
      for (const e of entries) e.reject(err);
    }
  }
}

/**
 * An `around` hook that freezes every server but the one being measured (see LockstepOptions);
 * it serves any other work that must have one server to itself as well.
 */
export function freezingOthers(
  servers: [string, { freeze(frozen: boolean): void }][],
): <T>(party: string, window: () => Promise<T>) => Promise<T> {
  return async (party, window) => {
    const others = servers.filter(([name]) => name !== party).map(([, server]) => server);
    for (const server of others) server.freeze(true);
    try {
      return await window();
    } finally {
      for (const server of others) server.freeze(false);
    }
  };
}
