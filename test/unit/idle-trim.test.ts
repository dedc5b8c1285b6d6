// When an idle server trims its heap: once right after the start when it first goes quiet, then
// once per idle period, and only after the configured number of idle seconds.
import { describe, expect, it } from 'vitest';
import vm from 'node:vm';
import { IdleTrimPolicy, lastResortCollector } from '../../common/memory/index.js';

/** Busy milliseconds of a tick: '.' idle, '+' a blip of housekeeping, '#' a second of work. */
const BUSY = { '.': 0, '+': 30, '#': 400 } as const;

/** Ticks the policy with a pattern of ticks (see BUSY); returns the ticks (0-based) that trim. */
function trims(policy: IdleTrimPolicy, pattern: string): number[] {
  return [...pattern].flatMap((c, i) => (policy.tick(BUSY[c as keyof typeof BUSY]) ? [i] : []));
}

const policy = (idleTicks: number, startIdleTicks = 1) =>
  new IdleTrimPolicy({ idleTicks, startIdleTicks, idleBusyMs: 20, workMs: 100 });

describe('IdleTrimPolicy', () => {
  it('trims after the start’s first quiet tick, once, however long the quiet lasts', () => {
    expect(trims(policy(5), '##.........')).toEqual([2]);
  });

  it('after the first trim, trims once per idle period of the configured length after work', () => {
    // The start's trim at 1; two idle ticks (3, 4) are too few; the third of 6-8 trims and the
    // period stays trimmed through 12; after the work at 13, the third idle tick (16) trims again.
    expect(trims(policy(3), '#.' + '#..' + '#...' + '....' + '#.....')).toEqual([1, 8, 16]);
  });

  it('busy ticks reset the idle count', () => {
    const p = policy(2, 2);
    expect(trims(p, '.#.#.#.#')).toEqual([]);
    expect(trims(p, '..')).toEqual([1]);
  });

  it('housekeeping blips between idle periods bring no trim until they add up to work', () => {
    // After the start's trim (1), three blips (90 ms) are not enough; the fourth (120 ms) is.
    expect(trims(policy(2), '#.' + '+..' + '+..' + '+..' + '+..')).toEqual([1, 13]);
  });
});

describe('lastResortCollector', () => {
  it('collects without leaving a gc global in this context or in later ones', () => {
    const collect = lastResortCollector();
    expect(collect).toBeTypeOf('function');
    collect!();
    expect(typeof globalThis.gc).toBe('undefined');
    expect(vm.runInNewContext('typeof gc')).toBe('undefined');
  });
});
