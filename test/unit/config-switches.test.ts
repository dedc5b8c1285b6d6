// The `http`, `store` and `checkpointer` keys of langgraph.json: validation naming the key, the
// settings derived from them, and the pure rules behind configurable headers and store filters.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadLanggraphConfig } from '../../runtime/config/index.js';
import { headerSelector } from '../../runtime/runs/index.js';
import { storeSettings } from '../../runtime/store/index.js';
import { filterConditions } from '../../runtime/store/service.js';
import { checkpointerTtlSettings } from '../../runtime/ttl/index.js';

function configFile(content: unknown, extra: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'gd-switch-config-'));
  for (const [name, text] of Object.entries(extra)) writeFileSync(join(dir, name), text);
  const path = join(dir, 'langgraph.json');
  writeFileSync(path, JSON.stringify(content));
  return path;
}

const load = (extra: Record<string, unknown>) =>
  loadLanggraphConfig(configFile({ graphs: {}, ...extra }));

describe('validation of the switches', () => {
  it.each([
    [{ http: { cors: { allow_origin: ['*'] } } }, /http\.cors\.allow_origin/],
    [{ http: { cors: { max_age: 'long' } } }, /http\.cors\.max_age/],
    [{ http: { mount_prefix: 3 } }, /http\.mount_prefix/],
    [{ http: { disable_store: 'true' } }, /http\.disable_store/],
    [
      { http: { configurable_headers: { includes: 'x-*' } } },
      /http\.configurable_headers\.includes/,
    ],
    [
      { http: { configurable_headers: { include: ['x-*'] } } },
      /http\.configurable_headers\.include/,
    ],
    [{ store: { index: { embed: './e.ts:embed' } } }, /store\.index\.dims/],
    [{ store: { ttl: { default_ttl: -5 } } }, /store\.ttl\.default_ttl/],
    [{ store: { ttl: { refresh: true } } }, /store\.ttl\.refresh/],
    [{ checkpointer: { ttl: { strategy: 'archive' } } }, /checkpointer\.ttl\.strategy/],
    [{ checkpointer: { ttl: { sweep_interval: 5 } } }, /checkpointer\.ttl\.sweep_interval/],
  ])('refuses %j naming the key', (extra, key) => {
    expect(() => load(extra)).toThrow(key);
  });
});

describe('settings', () => {
  it('derives thread TTL settings from checkpointer.ttl', () => {
    expect(checkpointerTtlSettings(load({}))).toEqual({
      defaultTtl: undefined,
      sweepIntervalMs: 60_000,
      sweepLimit: 1000,
    });
    const set = load({
      checkpointer: {
        ttl: {
          strategy: 'keep_latest',
          default_ttl: 30,
          sweep_interval_minutes: 2,
          sweep_limit: 5,
        },
      },
    });
    expect(checkpointerTtlSettings(set)).toEqual({
      defaultTtl: { minutes: 30, strategy: 'keep_latest' },
      sweepIntervalMs: 120_000,
      sweepLimit: 5,
    });
  });

  it('derives store settings and loads the embedding function', async () => {
    const defaults = await storeSettings(load({}));
    expect(defaults).toMatchObject({ defaultTtlMinutes: null, refreshOnRead: true });
    expect(defaults.index).toBeUndefined();

    const path = configFile(
      {
        graphs: {},
        store: { index: { dims: 2, embed: './embed.mjs:embed' }, ttl: { default_ttl: 7 } },
      },
      { 'embed.mjs': 'export const embed = (texts) => texts.map((t) => [t.length, 1]);' },
    );
    const settings = await storeSettings(loadLanggraphConfig(path));
    expect(settings.defaultTtlMinutes).toBe(7);
    expect(settings.index?.fields).toEqual(['$']);
    expect(await settings.index?.embedder.embedQuery('abc')).toEqual([3, 1]);
  });

  it('refuses an embedding provider string, a missing file and a non-function export', async () => {
    await expect(
      storeSettings(
        load({ store: { index: { dims: 2, embed: 'openai:text-embedding-3-small' } } }),
      ),
    ).rejects.toThrow(
      /store\.index\.embed: "openai:text-embedding-3-small" names an embedding provider/,
    );
    await expect(
      storeSettings(load({ store: { index: { dims: 2, embed: './missing.ts:embed' } } })),
    ).rejects.toThrow(/store\.index\.embed: file not found/);
    const path = configFile(
      { graphs: {}, store: { index: { dims: 2, embed: './embed.mjs:dims' } } },
      { 'embed.mjs': 'export const dims = 2;' },
    );
    await expect(storeSettings(loadLanggraphConfig(path))).rejects.toThrow(/neither a function/);
  });
});

describe('configurable headers', () => {
  const headers = {
    'x-user-id': 'u1',
    'x-api-key': 'secret',
    'x-tenant-id': 't',
    'x-service-key': 's',
    'user-agent': 'ua',
    authorization: 'Bearer x',
    'content-type': 'application/json',
    'x-multi': ['a', 'b'],
  };

  it('copies x-* headers but credentials, and user-agent, by default', () => {
    expect(headerSelector(undefined)(headers)).toEqual({
      'x-user-id': 'u1',
      'user-agent': 'ua',
      'x-multi': 'a, b',
    });
  });

  it('keeps a distributed trace and its baggage whatever the patterns, and drops malformed ones', () => {
    const trace =
      '20260101T120000000001Z0f3b3a52-1111-4a4a-8b8b-000000000001.20260101T120000000002Z0f3b3a52-1111-4a4a-8b8b-000000000002';
    const baggage = [
      `langsmith-metadata=${encodeURIComponent('{"tenant":"acme"}')}`,
      `langsmith-tags=${encodeURIComponent('a,b')}`,
      'langsmith-project=proj',
      'other=1',
    ].join(',');
    const only = headerSelector({ includes: ['x-user-id'] });
    expect(only({ 'langsmith-trace': trace, baggage, 'x-user-id': 'u' })).toEqual({
      'x-user-id': 'u',
      'langsmith-trace': trace,
      'langsmith-metadata': { tenant: 'acme' },
      'langsmith-tags': ['a', 'b'],
      'langsmith-project': 'proj',
    });
    const bad = `langsmith-metadata=${encodeURIComponent('[1]')},langsmith-tags=%E0%A4%A,langsmith-project=`;
    expect(only({ 'langsmith-trace': trace, baggage: bad })).toEqual({ 'langsmith-trace': trace });
    for (const stray of ['', 'x', `${trace}.`, trace.replace('Z0f', 'Zzz'), `${trace}\u0000`])
      expect(only({ 'langsmith-trace': stray, baggage })).toEqual({});
    // A dotted order of 150 runs is over the 8 KiB bound; one of 100 is within it.
    const deep = (n: number) => Array.from({ length: n }, () => trace.split('.')[0]).join('.');
    expect(only({ 'langsmith-trace': deep(150) })).toEqual({});
    expect(only({ 'langsmith-trace': deep(100) })).toEqual({ 'langsmith-trace': deep(100) });
  });

  it('takes exactly the included patterns, and excludes always win', () => {
    const select = headerSelector({ includes: ['X-User-*', 'authorization', 'x-api-key'] });
    expect(select(headers)).toEqual({
      'x-user-id': 'u1',
      authorization: 'Bearer x',
      'x-api-key': 'secret',
    });
    const excluded = headerSelector({ includes: ['x-*'], excludes: ['x-*-id', 'x-api-key'] });
    expect(Object.keys(excluded(headers)).sort()).toEqual(['x-multi', 'x-service-key']);
    expect(headerSelector({ excludes: ['x-user-id'] })(headers)).toEqual({
      'user-agent': 'ua',
      'x-multi': 'a, b',
    });
  });

  it('treats every pattern character but * literally', () => {
    const select = headerSelector({ includes: ['x-a.c', 'x-(b)+'] });
    expect(select({ 'x-abc': '1', 'x-a.c': '2', 'x-bb': '3', 'x-(b)+': '4' })).toEqual({
      'x-a.c': '2',
      'x-(b)+': '4',
    });
  });
});

describe('store filters', () => {
  it('turns values into equality and $-operators into comparisons on dotted paths', () => {
    expect(filterConditions({ kind: 'note', 'a.b': { $gte: 2, $lt: 5 }, t: { x: 1 } })).toEqual([
      { path: ['kind'], op: '=', value: 'note' },
      { path: ['a', 'b'], op: '>=', value: 2 },
      { path: ['a', 'b'], op: '<', value: 5 },
      { path: ['t'], op: '=', value: { x: 1 } },
    ]);
    expect(() => filterConditions({ n: { $in: [1] } })).toThrow(/Unknown filter operator "\$in"/);
  });
});
