// Pure parts of serving graph modules written for the official JS server: which headers
// `http.logging_headers` selects, winston-style logger calls as pino's arguments, and the
// LANGGRAPH_CONFIG value.
import { describe, expect, it } from 'vitest';
import { systemAssistantDefaults } from '../../runtime/assistants/index.js';
import { ConfigFileError } from '../../runtime/config/index.js';
import { toPinoArgs } from '../../runtime/graphs/sdk-logger.js';
import { headerSelector } from '../../runtime/http/request-log.js';

describe('headerSelector', () => {
  it('selects nothing without settings', () => {
    expect(headerSelector(undefined)('x-request-id')).toBe(false);
    expect(headerSelector(null)('x-request-id')).toBe(false);
  });

  it('matches names and * globs case-insensitively; an exclusion wins', () => {
    const selected = headerSelector({
      includes: ['X-Request-ID', '*-trace-*', 'x-*-id'],
      excludes: ['x-user-id'],
    });
    expect(selected('x-request-id')).toBe(true);
    expect(selected('x-cloud-trace-context')).toBe(true);
    expect(selected('x-org-id')).toBe(true);
    expect(selected('x-user-id')).toBe(false);
    expect(selected('trace-id')).toBe(false);
    expect(selected('x-request-idx')).toBe(false);
  });

  it('treats every character but * literally', () => {
    const selected = headerSelector({ includes: ['x.a+b'] });
    expect(selected('x.a+b')).toBe(true);
    expect(selected('xyaab')).toBe(false);
  });
});

describe('toPinoArgs', () => {
  it('takes a message and metadata objects', () => {
    expect(toPinoArgs(['ran', { node: 'a' }, { step: 2 }])).toEqual([
      { node: 'a', step: 2 },
      'ran',
    ]);
  });

  it('takes one object with a message', () => {
    expect(toPinoArgs([{ message: 'ran', node: 'a' }])).toEqual([{ node: 'a' }, 'ran']);
  });

  it('keeps errors as err and other values as args', () => {
    const err = new Error('boom');
    expect(toPinoArgs([err])).toEqual([{ err }, 'boom']);
    expect(toPinoArgs(['failed', err, 42])).toEqual([{ err, args: [42] }, 'failed']);
  });
});

describe('systemAssistantDefaults (LANGGRAPH_CONFIG)', () => {
  it('splits each graph’s context from its config', () => {
    const defaults = systemAssistantDefaults(
      JSON.stringify({
        agent: { configurable: { a: 1 }, recursion_limit: 5, context: { t: 'x' } },
      }),
    );
    expect(defaults.get('agent')).toEqual({
      config: { configurable: { a: 1 }, recursion_limit: 5 },
      context: { t: 'x' },
    });
  });

  it('is empty when unset', () => {
    expect(systemAssistantDefaults(undefined).size).toBe(0);
    expect(systemAssistantDefaults(' ').size).toBe(0);
  });

  it('refuses values that are not JSON objects of config objects', () => {
    expect(() => systemAssistantDefaults('{agent:')).toThrow(ConfigFileError);
    expect(() => systemAssistantDefaults('[]')).toThrow(/LANGGRAPH_CONFIG/);
    expect(() => systemAssistantDefaults('{"agent": 3}')).toThrow(/agent/);
    expect(() => systemAssistantDefaults('{"agent": {"context": "x"}}')).toThrow(/context/);
  });
});
