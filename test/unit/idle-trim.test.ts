// When an idle server trims its heap: once right after the start when it first goes quiet, then
// once per idle period, and only after the configured number of idle seconds.
import { describe, expect, it } from 'vitest';
import vm from 'node:vm';
import { IdleTrimPolicy, lastResortCollector } from '../../common/memory/index.js';

/** Ticks the policy with a pattern ('.' idle, '#' busy); returns the ticks (0-based) that trim. */
function trims(policy: IdleTrimPolicy, pattern: string): number[] {
  return [...pattern].flatMap((c, i) => (policy.tick(c === '.') ? [i] : []));
}

describe('IdleTrimPolicy', () => {
  it('trims after the start’s first quiet tick, once, however long the quiet lasts', () => {
    const policy = new IdleTrimPolicy({ idleTicks: 5, startIdleTicks: 1 });
    expect(trims(policy, '##.........')).toEqual([2]);
  });

  it('after the first trim, trims once per idle period of the configured length', () => {
    const policy = new IdleTrimPolicy({ idleTicks: 3, startIdleTicks: 1 });
    // The start's trim at 1; two idle ticks (3, 4) are too few; the third of 6-8 trims and the
    // period stays trimmed through 12; after the busy 13, the third idle tick (16) trims again.
    expect(trims(policy, '#.' + '#..' + '#...' + '....' + '#.....')).toEqual([1, 8, 16]);
  });

  it('busy ticks reset the idle count', () => {
    const policy = new IdleTrimPolicy({ idleTicks: 2, startIdleTicks: 2 });
    expect(trims(policy, '.#.#.#.#')).toEqual([]);
    expect(trims(policy, '..')).toEqual([1]);
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
