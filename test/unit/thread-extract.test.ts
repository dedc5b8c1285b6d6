// The paths of thread search's `extract`, followed through a thread as the Python server follows
// them: dotted keys, list indexes (negative from the end), and null wherever a path leads nowhere.
import { describe, expect, it } from 'vitest';
import { extractPath, extractRoot } from '../../runtime/threads/extract.js';

const thread = {
  thread_id: 't',
  values: {
    messages: [
      { content: 'a', type: 'human' },
      { content: 'b', type: 'ai' },
    ],
    n: 0,
  },
  metadata: { user: { name: 'ana' }, _secret: 's', flag: false },
  config: {},
  interrupts: { task: [{ value: 'q' }] },
};

describe('extractPath', () => {
  it('follows keys and indexes from the four columns', () => {
    expect(extractPath(thread, 'values.messages[0].content')).toBe('a');
    expect(extractPath(thread, 'values.messages[-1].type')).toBe('ai');
    expect(extractPath(thread, 'values.messages')).toEqual(thread.values.messages);
    expect(extractPath(thread, 'metadata.user.name')).toBe('ana');
    expect(extractPath(thread, 'interrupts.task[0].value')).toBe('q');
    expect(extractPath(thread, 'values.n')).toBe(0);
    expect(extractPath(thread, 'metadata.flag')).toBe(false);
    expect(extractPath(thread, 'config')).toEqual({});
  });

  it('gives null where the path leads nowhere', () => {
    for (const path of [
      'values.messages[2].content',
      'values.messages[-3]',
      'values.messages[x]',
      'values.n[0]',
      'values.messages.content',
      'values.none.deeper',
      'metadata._secret',
      'metadata.user.name.first',
      'thread_id',
      'values.constructor',
    ])
      expect(extractPath(thread, path), path).toBeNull();
  });
});

describe('extractRoot', () => {
  it('is the column a path starts from', () => {
    expect(extractRoot('values.messages[0]')).toBe('values');
    expect(extractRoot('metadata')).toBe('metadata');
    expect(extractRoot('values[0]')).toBe('values');
  });
});
