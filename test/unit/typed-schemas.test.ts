// The scheduling of schema extraction from TypeScript types (the compiler itself runs in a worker
// and is covered by test/integration/typed-schemas.test.ts): one batch for every TypeScript graph,
// a time limit per graph, results and failures kept, JavaScript graphs never sent.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SCHEMA_TIMEOUT_MS,
  TypedSchemaResolver,
  schemaTimeoutFrom,
  type TypedSchemas,
} from '../../runtime/graphs/typed-schemas.js';

const logger = pino({ level: 'silent' });
const sources = [
  { graphId: 'a', file: '/p/a.ts', exportName: 'graph' },
  { graphId: 'b', file: '/p/b.mts', exportName: 'default' },
  { graphId: 'js', file: '/p/js.mjs', exportName: 'graph' },
];
const schemaOf = (file: string): TypedSchemas => ({ state: { title: file } });

describe('TypedSchemaResolver', () => {
  it('reads every TypeScript graph in one extraction on the first request, then from memory', async () => {
    const calls: { files: string[]; timeoutMs: number }[] = [];
    const resolver = new TypedSchemaResolver({
      sources,
      timeoutMs: 1000,
      logger,
      extract: (requests, timeoutMs) => {
        calls.push({ files: requests.map((r) => r.file), timeoutMs });
        return Promise.resolve(requests.map((r) => schemaOf(r.file)));
      },
    });
    expect(resolver.ready('b')).toBeUndefined();
    expect(await resolver.resolve('b')).toEqual(schemaOf('/p/b.mts'));
    expect(resolver.ready('a')).toEqual(schemaOf('/p/a.ts'));
    expect(await resolver.resolve('a')).toEqual(schemaOf('/p/a.ts'));
    expect(await resolver.resolve('js')).toBeUndefined();
    expect(await resolver.resolve('unknown')).toBeUndefined();
    // Each graph gets the time the official server allows one.
    expect(calls).toEqual([{ files: ['/p/a.ts', '/p/b.mts'], timeoutMs: 2000 }]);
  });

  it('keeps a failure as "no typed schemas" without asking again', async () => {
    let calls = 0;
    const resolver = new TypedSchemaResolver({
      sources,
      timeoutMs: 1000,
      logger,
      extract: () => {
        calls++;
        return Promise.reject(new Error('timed out after 2000 ms'));
      },
    });
    expect(await resolver.resolve('a')).toBeUndefined();
    expect(await resolver.resolve('b')).toBeUndefined();
    expect(calls).toBe(1);
  });
});

describe('schemaTimeoutFrom', () => {
  it('reads LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS as the official server does', () => {
    expect(schemaTimeoutFrom('5000')).toBe(5000);
    expect(schemaTimeoutFrom(undefined)).toBe(DEFAULT_SCHEMA_TIMEOUT_MS);
    expect(schemaTimeoutFrom('0')).toBe(DEFAULT_SCHEMA_TIMEOUT_MS);
    expect(schemaTimeoutFrom('soon')).toBe(DEFAULT_SCHEMA_TIMEOUT_MS);
  });
});
