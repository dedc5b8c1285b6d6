import { describe, expect, it } from 'vitest';
import { CLIPPED_JSON, clipJsonDepth, jsonDepthExceeds } from '../../common/json/index.js';

/** `levels` arrays around `bottom`. */
const nested = (levels: number, bottom: unknown = 1): unknown =>
  Array.from({ length: levels }).reduce<unknown>((inner) => [inner], bottom);

/** The value at `levels` arrays down, following first items. */
const down = (value: unknown, levels: number): unknown =>
  Array.from({ length: levels }).reduce<unknown>((v) => (v as unknown[])[0], value);

describe('clipJsonDepth', () => {
  it('leaves text within the limit as it is, the same string', () => {
    const text = JSON.stringify({ a: nested(20), b: '[[[[{{{{', c: 'x\\"[[' });
    expect(clipJsonDepth(text, 21)).toEqual({ text, clipped: 0 });
    const atLimit = JSON.stringify(nested(512));
    expect(clipJsonDepth(atLimit).text).toBe(atLimit);
  });

  it('replaces every array or object past the limit by the marker, and keeps the rest', () => {
    const value = {
      deep: nested(600, { kept: 'no' }),
      shallow: [1, 2, { three: 3 }],
      again: [nested(40, 'x')],
    };
    const { text, clipped } = clipJsonDepth(JSON.stringify(value), 10);
    expect(clipped).toBe(2);
    expect(jsonDepthExceeds(text, 10)).toBe(false);
    const parsed = JSON.parse(text) as typeof value;
    // The object is level 1, `deep` 2: nine arrays fit (levels 2 to 10), the tenth is cut.
    expect(down(parsed.deep, 8)).toEqual([CLIPPED_JSON]);
    expect(parsed.shallow).toEqual(value.shallow);
    expect(down(parsed.again, 9)).toBe(CLIPPED_JSON);
  });

  it('is not misled by brackets and escaped quotes inside strings', () => {
    const bottom = { s: '"]}\\"[{', t: '\\', u: ']]]]' };
    const value = [nested(8, bottom), '}}}]]]', nested(3, '[[[[[[[[[[[[[[[[[[[[')];
    const { text, clipped } = clipJsonDepth(JSON.stringify(value), 6);
    expect(clipped).toBe(1);
    const parsed = JSON.parse(text) as unknown[];
    expect(down(parsed[0], 5)).toBe(CLIPPED_JSON);
    expect(parsed.slice(1)).toEqual(value.slice(1));
  });

  it('cuts a body a million deep in one pass, and text that is not JSON stays not JSON', () => {
    const million = `${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`;
    const started = performance.now();
    const { text, clipped } = clipJsonDepth(million);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(clipped).toBe(1);
    expect(down(JSON.parse(text), 511)).toEqual([CLIPPED_JSON]);
    const unclosed = clipJsonDepth(`{"a":${'['.repeat(600)}`);
    expect(() => JSON.parse(unclosed.text) as unknown).toThrow(SyntaxError);
    const unterminated = clipJsonDepth(`${'['.repeat(600)}"abc`);
    expect(() => JSON.parse(unterminated.text) as unknown).toThrow(SyntaxError);
  });
});
