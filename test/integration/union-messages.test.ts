// Fields that take one of several shapes (a TTL as minutes or an object, breakpoints as "*" or a
// list, ...) answer a value of none of them with a 422 that names the shapes they take, on a real
// server. zod's own message for such a field is "Invalid input", which told a client nothing.
import { describe, expect, it } from 'vitest';
import { useRuntime } from '../support/fixture.js';

const rt = useRuntime();

type Case = [
  method: string,
  path: (thread: string) => string,
  body: unknown,
  loc: string[],
  msg: string,
];

const TTL = 'Expected minutes, or {"ttl": minutes, "strategy": "delete" or "keep_latest"}';
const XRAY = 'Expected true, false or a depth (a whole number)';
const ECHO = '046b5dc7-2108-582c-9c6c-31d556d138f0';

const cases: Case[] = [
  ['POST', () => '/threads', { ttl: 'soon' }, ['body', 'ttl'], TTL],
  ['POST', () => '/threads', { ttl: { ttl: 5, strategy: 'nope' } }, ['body', 'ttl'], TTL],
  ['PATCH', (t) => `/threads/${t}`, { ttl: [5] }, ['body', 'ttl'], TTL],
  [
    'POST',
    (t) => `/threads/${t}/runs/wait`,
    { assistant_id: 'echo', input: {}, interrupt_before: 'all' },
    ['body', 'interrupt_before'],
    'Expected "*" or a list of node names',
  ],
  [
    'POST',
    (t) => `/threads/${t}/runs`,
    { assistant_id: 'echo', input: {}, interrupt_after: [1] },
    ['body', 'interrupt_after'],
    'Expected "*" or a list of node names',
  ],
  [
    'PUT',
    () => '/store/items',
    { namespace: ['a'], key: 'k', value: {}, index: true },
    ['body', 'index'],
    'Expected false or a list of the fields to embed',
  ],
  ['GET', () => `/assistants/${ECHO}/graph?xray=maybe`, undefined, ['query', 'xray'], XRAY],
  ['GET', () => `/assistants/${ECHO}/graph?xray=-1`, undefined, ['query', 'xray'], XRAY],
];

describe('a field of several shapes given none of them', () => {
  it('is a 422 naming the shapes it takes', async () => {
    const thread = (await rt.client.threads.create()).thread_id;
    for (const [method, path, json, loc, msg] of cases) {
      const res = await rt.http(path(thread), { method, ...(json ? { json } : {}) });
      expect([method, path(thread), res.status]).toEqual([method, path(thread), 422]);
      const { detail } = (await res.json()) as { detail: { loc: string[]; msg: string }[] };
      expect(detail).toEqual([expect.objectContaining({ loc, msg })]);
    }
    // Nothing of the refused requests was kept.
    expect((await rt.client.threads.get(thread)).status).toBe('idle');
    expect(await rt.client.runs.list(thread)).toEqual([]);
    expect(await rt.client.store.getItem(['a'], 'k')).toBeNull();
  });
});
