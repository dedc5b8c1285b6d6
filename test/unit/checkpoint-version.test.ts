import { describe, expect, it } from 'vitest';
import { nextChannelVersion } from '../../runtime/checkpoints/index.js';

describe('nextChannelVersion', () => {
  it('counts up from nothing, numbers and earlier string versions', () => {
    expect(nextChannelVersion(undefined).split('.')[0]).toBe('1'.padStart(32, '0'));
    expect(nextChannelVersion(7).split('.')[0]).toBe('8'.padStart(32, '0'));
    expect(
      nextChannelVersion(nextChannelVersion(nextChannelVersion(undefined))).split('.')[0],
    ).toBe('3'.padStart(32, '0'));
  });

  it('never repeats for the same predecessor, so forked branches keep separate blobs', () => {
    const base = nextChannelVersion(undefined);
    expect(nextChannelVersion(base)).not.toBe(nextChannelVersion(base));
  });

  it('orders as strings in the order it was produced', () => {
    let v = nextChannelVersion(undefined);
    for (let i = 0; i < 120; i++) {
      const next = nextChannelVersion(v);
      expect(next.localeCompare(v)).toBe(1);
      v = next;
    }
  });
});
