import { randomBytes, randomInt } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { parseByteaArray } from '../../common/db/index.js';

const unexpected = (text: string) => ({ fallback: text });

/** The text PostgreSQL sends for a bytea[] value in hex output. */
function pgText(value: unknown): string {
  if (value === null) return 'NULL';
  if (Buffer.isBuffer(value)) return `"\\\\x${value.toString('hex')}"`;
  return `{${(value as unknown[]).map(pgText).join(',')}}`;
}

function randomValue(depth: number): unknown {
  const length = randomInt(0, 4);
  return Array.from({ length }, () =>
    depth > 1
      ? randomValue(depth - 1)
      : randomInt(0, 6) === 0
        ? null
        : randomBytes(randomInt(0, 40)),
  );
}

describe('parseByteaArray', () => {
  it('reads nested hex arrays, NULLs and empty values as pg would', () => {
    for (let i = 0; i < 500; i++) {
      const value = randomValue(randomInt(1, 4));
      expect(parseByteaArray(pgText(value), unexpected)).toEqual(value);
    }
    expect(parseByteaArray('{}', unexpected)).toEqual([]);
    expect(parseByteaArray('{"\\\\x",NULL}', unexpected)).toEqual([Buffer.alloc(0), null]);
  });

  it('leaves every other shape to the fallback', () => {
    for (const text of [
      '[0:1]={"\\\\x00","\\\\x01"}',
      '{"\\\\000\\\\001"}',
      '{"\\\\x00"',
      '{"\\\\x00"}}',
      '{"\\\\x00"}{}',
      '{abc}',
    ]) {
      expect(parseByteaArray(text, unexpected)).toEqual({ fallback: text });
    }
  });

  it("is what pg uses for bytea[] columns, with pg's parser behind it", () => {
    const parse = pg.types.getTypeParser(1001 as never, 'text') as (t: string) => unknown;
    expect(parse('{{"\\\\x6869",NULL}}')).toEqual([[Buffer.from('hi'), null]]);
    expect(parse('{"\\\\001"}')).toEqual([Buffer.from([1])]);
  });
});
