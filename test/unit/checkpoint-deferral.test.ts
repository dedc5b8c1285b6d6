import { ERROR } from '@langchain/langgraph-checkpoint';
import { describe, expect, it } from 'vitest';
import type { EmbeddedStatement } from '../../common/db/index.js';
import {
  CheckpointDeferral,
  PendingCheckpointWrites,
  asOneStatement,
} from '../../runtime/checkpoints/deferred.js';

const checkpoint = (id: string, body: string) => ['t1', '', id, null, { body }, {}];
const blob = (channel: string, version: string, body: string) => [
  't1',
  '',
  channel,
  version,
  'json',
  Buffer.from(body),
];
const writeRow = (checkpointId: string, idx: number, channel: string, body: string) => [
  't1',
  '',
  checkpointId,
  'task',
  idx,
  channel,
  'json',
  Buffer.from(body),
];

/** Statement text and parameters by table and conflict rule, from `take()`. */
function taken(pending: PendingCheckpointWrites) {
  const { text, values } = asOneStatement(pending.take());
  return { text, values: values.map((v) => (Buffer.isBuffer(v) ? v.toString() : v)) };
}

describe('pending checkpoint writes', () => {
  it('keeps the last of a checkpoint written twice and the first of a blob', () => {
    const pending = new PendingCheckpointWrites();
    pending.addCheckpoint(checkpoint('c1', 'old'), [blob('messages', '1.a', 'first')]);
    pending.addCheckpoint(checkpoint('c1', 'new'), [blob('messages', '1.a', 'again')]);
    pending.addCheckpoint(checkpoint('c2', 'other'), [blob('messages', '2.b', 'second')]);
    const { text, values } = taken(pending);
    expect(text).toMatch(/^WITH w0 AS \(INSERT INTO checkpoint_blobs .* DO NOTHING\), w1 AS/);
    expect(text).toContain('INSERT INTO checkpoints');
    expect(values).toContain('first');
    expect(values).not.toContain('again');
    expect(values).toContainEqual({ body: 'new' });
    expect(values).not.toContainEqual({ body: 'old' });
    // Two blobs and two checkpoints, six parameters each.
    expect(values).toHaveLength(24);
  });

  it('reduces task writes across calls as sequential statements would', () => {
    const pending = new PendingCheckpointWrites();
    pending.addWrites([writeRow('c1', 0, 'messages', 'kept')], ['messages']);
    pending.addWrites([writeRow('c1', 0, 'messages', 'ignored')], ['messages']);
    pending.addWrites([writeRow('c1', -1, ERROR, 'old error')], [ERROR]);
    pending.addWrites([writeRow('c1', -1, ERROR, 'new error')], [ERROR]);
    const { text, values } = taken(pending);
    expect(values).toEqual(expect.arrayContaining(['kept', 'new error']));
    expect(values).not.toContain('ignored');
    expect(values).not.toContain('old error');
    // One insert that keeps existing rows, one that replaces them.
    expect(text).toMatch(
      /checkpoint_writes .* DO NOTHING\), w1 AS \(INSERT INTO checkpoint_writes/,
    );
    expect(text).toContain('DO UPDATE SET channel = EXCLUDED.channel');
  });

  it('numbers parameters across the statement and leaves nothing after take', () => {
    const pending = new PendingCheckpointWrites();
    pending.addCheckpoint(checkpoint('c1', 'x'), [blob('a', '1.a', 'b')]);
    pending.addWrites([writeRow('c1', 0, 'a', 'w')], ['a']);
    const { text, values } = asOneStatement(pending.take());
    expect(text).toContain('VALUES ($13, $14, $15, $16, $17, $18, $19, $20)');
    expect(values).toHaveLength(20);
    expect(pending.size).toBe(0);
    expect(pending.take()).toEqual([]);
  });
});

describe('checkpoint deferral', () => {
  const recorder = () => {
    const statements: { text: string; values: unknown[] }[] = [];
    return {
      statements,
      write: (inserts: EmbeddedStatement[]) => {
        statements.push(asOneStatement(inserts));
        return Promise.resolve();
      },
    };
  };

  it('writes nothing before its delay, then everything pending in one statement', async () => {
    const { statements, write } = recorder();
    const deferral = new CheckpointDeferral(write, 30);
    deferral.add((p) => p.addCheckpoint(checkpoint('c1', 'x'), []));
    deferral.add((p) => p.addWrites([writeRow('c1', 0, 'a', 'w')], ['a']));
    expect(statements).toHaveLength(0);
    await new Promise((r) => setTimeout(r, 80));
    expect(statements).toHaveLength(1);
    expect(statements[0]!.text).toContain('checkpoint_writes');
    expect(deferral.hasPending).toBe(false);
    await deferral.end();
  });

  it('hands back what is pending with take and stops taking writes', async () => {
    const { statements, write } = recorder();
    const deferral = new CheckpointDeferral(write, 1000);
    deferral.add((p) => p.addCheckpoint(checkpoint('c1', 'x'), []));
    const rest = await deferral.take();
    expect(rest).toHaveLength(1);
    expect(statements).toHaveLength(0);
    expect(deferral.active).toBe(false);
    expect(() => deferral.add((p) => p.addCheckpoint(checkpoint('c2', 'y'), []))).toThrow();
  });

  it('drops what is pending on discard, and writes it on end', async () => {
    const discarded = recorder();
    const first = new CheckpointDeferral(discarded.write, 1000);
    first.add((p) => p.addCheckpoint(checkpoint('c1', 'x'), []));
    await first.discard();
    expect(discarded.statements).toHaveLength(0);
    const ended = recorder();
    const second = new CheckpointDeferral(ended.write, 1000);
    second.add((p) => p.addCheckpoint(checkpoint('c1', 'x'), []));
    await second.end();
    expect(ended.statements).toHaveLength(1);
  });

  it('fails the writes after a failed flush, and take with it', async () => {
    const deferral = new CheckpointDeferral(() => Promise.reject(new Error('disk full')), 1000);
    deferral.add((p) => p.addCheckpoint(checkpoint('c1', 'x'), []));
    await expect(deferral.flush()).rejects.toThrow('disk full');
    expect(() => deferral.add((p) => p.addCheckpoint(checkpoint('c2', 'y'), []))).toThrow(
      'disk full',
    );
    await expect(deferral.take()).rejects.toThrow('disk full');
  });

  it('keeps flushes in order: a later one starts after the earlier one is durable', async () => {
    const order: string[] = [];
    let release: () => void = () => undefined;
    const deferral = new CheckpointDeferral(async (inserts) => {
      const id = String(asOneStatement(inserts).values[2]);
      order.push(`start ${id}`);
      if (id === 'c1') await new Promise<void>((r) => (release = r));
      order.push(`done ${id}`);
    }, 1000);
    deferral.add((p) => p.addCheckpoint(checkpoint('c1', 'x'), []));
    const first = deferral.flush();
    deferral.add((p) => p.addCheckpoint(checkpoint('c2', 'y'), []));
    const second = deferral.flush();
    await new Promise((r) => setTimeout(r, 10));
    expect(order).toEqual(['start c1']);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['start c1', 'done c1', 'start c2', 'done c2']);
  });
});
