// Which module resolutions bin/module-caches.mjs reuses, and under which key.
import { describe, expect, it } from 'vitest';
import { resolutionKey } from '../../bin/module-caches.mjs';

const core = 'file:///app/node_modules/@langchain/core/dist';
const imports = ['node', 'import'];
const key = (specifier: string, parentURL: string | undefined, conditions = imports) =>
  resolutionKey(specifier, { parentURL, conditions, importAttributes: {} });

describe('resolutionKey', () => {
  it('gives a relative import the same key from every importer of the same file', () => {
    const fromMessages = key('../utils/env.js', `${core}/messages/base.js`);
    expect(fromMessages).toBeDefined();
    expect(key('./utils/env.js', `${core}/index.js`)).toBe(fromMessages);
    expect(key('../utils/env.js', `${core}/runnables/base.js`)).toBe(fromMessages);
    expect(key('../utils/other.js', `${core}/messages/base.js`)).not.toBe(fromMessages);
  });

  it('gives a bare import one key per importing folder', () => {
    const a = key('uuid', `${core}/messages/base.js`);
    expect(a).toBeDefined();
    expect(key('uuid', `${core}/messages/tool.js`)).toBe(a);
    expect(key('uuid', `${core}/runnables/base.js`)).not.toBe(a);
    expect(key('#internal', `${core}/messages/tool.js`)).not.toBe(a);
  });

  it('keeps import and require apart', () => {
    const parent = `${core}/messages/base.js`;
    expect(key('./tool', parent, ['node', 'require'])).not.toBe(key('./tool', parent));
    expect(key('uuid', parent, ['node', 'require'])).not.toBe(key('uuid', parent));
  });

  it("leaves user code, built-ins, URLs, absolute paths and imports with attributes to Node's resolution", () => {
    expect(key('@langchain/langgraph', 'file:///deps/project/graph.mjs')).toBeUndefined();
    expect(key('./x.js', undefined)).toBeUndefined();
    const parent = `${core}/messages/base.js`;
    for (const specifier of [
      'node:fs',
      'fs:x',
      'file:///app/x.js',
      'data:text/javascript,1',
      '/app/x.js',
      '.',
      '..',
      '',
    ])
      expect(key(specifier, parent), specifier).toBeUndefined();
    expect(
      resolutionKey('./data.json', {
        parentURL: parent,
        conditions: imports,
        importAttributes: { type: 'json' },
      }),
    ).toBeUndefined();
  });
});
