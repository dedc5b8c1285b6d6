import { ERROR, INTERRUPT } from '@langchain/langgraph-checkpoint';
import { describe, expect, it } from 'vitest';
import {
  putCheckpointStatement,
  putWritesStatement,
} from '../../runtime/checkpoints/write-statements.js';

const row = (taskId: string, idx: number, channel: string, blob: string) => [
  't1',
  '',
  'c1',
  taskId,
  idx,
  channel,
  'json',
  Buffer.from(blob),
];

describe('checkpoint write statements', () => {
  it('writes a checkpoint and its blobs in one statement, parameters in order', () => {
    const checkpoint = ['t1', '', 'c2', 'c1', { v: 4 }, { step: 1 }];
    const blobs = [
      ['t1', '', 'messages', '2.a', 'json', Buffer.from('[]')],
      ['t1', '', 'count', '3.b', 'empty', undefined],
    ];
    const { text, values } = putCheckpointStatement(checkpoint, blobs);
    expect(text).toMatch(/^WITH blobs AS \(\s*INSERT INTO checkpoint_blobs/);
    expect(text).toContain('($7, $8, $9, $10, $11, $12), ($13, $14, $15, $16, $17, $18)');
    expect(text).toContain('VALUES ($1, $2, $3, $4, $5, $6)');
    expect(values).toEqual([...checkpoint, ...blobs[0]!, ...blobs[1]!]);
  });

  it('writes a checkpoint without blobs as a plain upsert', () => {
    const { text, values } = putCheckpointStatement(['t1', '', 'c2', null, {}, {}], []);
    expect(text).not.toContain('checkpoint_blobs');
    expect(values).toHaveLength(6);
  });

  it('keeps the first of ordinary writes that share a key, like sequential DO NOTHING inserts', () => {
    const statement = putWritesStatement(
      [row('a', 0, 'messages', 'first'), row('a', 0, 'messages', 'second'), row('a', 1, 'x', 'y')],
      ['messages', 'messages', 'x'],
    );
    expect(statement?.text).toContain('DO NOTHING');
    expect(statement?.values).toHaveLength(16);
    expect(String(statement?.values[7])).toBe('first');
  });

  it('keeps the last of special-channel writes that share a key, like sequential upserts', () => {
    const statement = putWritesStatement(
      [row('a', -1, ERROR, 'old'), row('a', -1, ERROR, 'new'), row('a', -3, INTERRUPT, 'i')],
      [ERROR, ERROR, INTERRUPT],
    );
    expect(statement?.text).toContain('DO UPDATE SET');
    expect(statement?.values).toHaveLength(16);
    expect(String(statement?.values[7])).toBe('new');
  });

  it('has nothing to write for no writes', () => {
    expect(putWritesStatement([], [])).toBeUndefined();
  });
});
