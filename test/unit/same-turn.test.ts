// sameTurnReads: identical calls in one turn of the event loop share one execution.
import { describe, expect, it } from 'vitest';
import { sameTurnReads } from '../../common/db/index.js';

function countingRead() {
  const calls: string[] = [];
  const read = sameTurnReads(async (args: { q: string }) => {
    calls.push(args.q);
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (args.q === 'bad') throw new Error('bad query');
    return { answer: args.q.toUpperCase() };
  });
  return { calls, read };
}

describe('sameTurnReads', () => {
  it('runs identical calls of one turn once and distinct ones once each', async () => {
    const { calls, read } = countingRead();
    const answers = await Promise.all([read({ q: 'a' }), read({ q: 'b' }), read({ q: 'a' })]);
    expect(calls.sort()).toEqual(['a', 'b']);
    expect(answers).toEqual([{ answer: 'A' }, { answer: 'B' }, { answer: 'A' }]);
    expect(answers[0]).toBe(answers[2]);
  });

  it('reads again for a call made in a later turn, even while the first is still running', async () => {
    const { calls, read } = countingRead();
    const first = read({ q: 'a' });
    await new Promise((resolve) => setImmediate(resolve));
    const second = read({ q: 'a' });
    await Promise.all([first, second]);
    expect(calls).toEqual(['a', 'a']);
  });

  it('gives a failure to every caller of the failed read and to no other', async () => {
    const { calls, read } = countingRead();
    const answers = await Promise.allSettled([
      read({ q: 'bad' }),
      read({ q: 'ok' }),
      read({ q: 'bad' }),
    ]);
    expect(calls.sort()).toEqual(['bad', 'ok']);
    expect(answers.map((a) => a.status)).toEqual(['rejected', 'fulfilled', 'rejected']);
    expect(answers[0]).toMatchObject({ reason: new Error('bad query') });
  });
});
