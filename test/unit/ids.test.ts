import { validate, version } from 'uuid';
import { describe, expect, it } from 'vitest';
import { randomHex, uuid7 } from '../../common/ids/index.js';

describe('uuid7', () => {
  it('makes valid, unique version 7 ids that sort in the order they were made', () => {
    // Far more than one pool of random bytes, and many ids per millisecond.
    const ids = Array.from({ length: 5000 }, () => uuid7());
    for (const id of ids.slice(0, 50)) {
      expect(validate(id)).toBe(true);
      expect(version(id)).toBe(7);
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('carries the time it was made in its first 48 bits', () => {
    const before = Date.now();
    const id = uuid7();
    const msecs = Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);
    expect(msecs).toBeGreaterThanOrEqual(before);
    expect(msecs).toBeLessThanOrEqual(Date.now() + 1);
  });
});

describe('randomHex', () => {
  it('gives distinct hex strings of the asked length, sharing the pool with the ids', () => {
    // Several pools' worth, interleaved with ids so refills happen mid-way through either.
    const hexes = Array.from({ length: 3000 }, (_, i) => (i % 3 ? randomHex(8) : uuid7())).filter(
      (v) => !v.includes('-'),
    );
    expect(hexes.every((h) => /^[0-9a-f]{16}$/.test(h))).toBe(true);
    expect(new Set(hexes).size).toBe(hexes.length);
    expect(randomHex(3)).toMatch(/^[0-9a-f]{6}$/);
  });
});
