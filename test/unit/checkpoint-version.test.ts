import { describe, expect, it } from 'vitest';
import type { Pool } from '../../common/db/index.js';
import {
  FRESH_THREAD_KEY,
  GraphdockCheckpointer,
  nextChannelVersion,
} from '../../runtime/checkpoints/index.js';

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

describe('GraphdockCheckpointer and a fresh thread', () => {
  // A pool that records the statements it is given and finds nothing.
  const recording = () => {
    const texts: string[] = [];
    const pool = {
      query: (q: string | { text: string }) => {
        texts.push(typeof q === 'string' ? q : q.text);
        return Promise.resolve({ rows: [], rowCount: 0 });
      },
    };
    return { checkpointer: new GraphdockCheckpointer(pool as unknown as Pool), texts };
  };
  const config = (extra: Record<string, unknown>) => ({
    configurable: { thread_id: 't1', checkpoint_ns: '', ...extra },
  });

  it('answers its first read without a query, and every later one with a query', async () => {
    const { checkpointer, texts } = recording();
    const marked = config({ [FRESH_THREAD_KEY]: { unread: true } });
    expect(await checkpointer.getTuple(marked)).toBeUndefined();
    expect(texts).toEqual([]);
    await checkpointer.getTuple(marked);
    expect(texts).toHaveLength(1);
  });

  it('reads as usual once something was written, and for a named checkpoint', async () => {
    const { checkpointer, texts } = recording();
    const written = config({ [FRESH_THREAD_KEY]: { unread: true } });
    await checkpointer.putWrites(
      { configurable: { ...written.configurable, checkpoint_id: 'c1' } },
      [['ch', 1]],
      'task',
    );
    const before = texts.length;
    await checkpointer.getTuple(written);
    expect(texts.length).toBe(before + 1);
    await checkpointer.getTuple(
      config({ [FRESH_THREAD_KEY]: { unread: true }, checkpoint_id: 'c9' }),
    );
    expect(texts.length).toBe(before + 2);
  });
});
