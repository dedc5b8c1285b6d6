import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeJsonText, encodeJsonText, jsonb } from '../../common/db/index.js';
import {
  CARRIED_PROTOCOL_COMMAND,
  CARRIED_RUN,
  jsonDepthExceeds,
  mayHoldUnstorable,
  unstorableStrings,
} from '../../common/json/index.js';

const PIECES = [
  'a',
  '\u0000',
  '\ud800',
  '\udc00',
  '\ud83d\ude00',
  '\ufdd0',
  '\\',
  '"',
  'u0000',
  'd800',
];

function randomString(): string {
  return Array.from({ length: randomInt(0, 8) }, () => PIECES[randomInt(PIECES.length)]).join('');
}

describe('jsonb text encoding', () => {
  it('leaves text without refused escapes or U+FDD0 as it is', () => {
    const text = JSON.stringify({ a: 'plain', b: ['\n\t', '\u0001', '\\u0000', '😀'] });
    expect(encodeJsonText(text)).toBe(text);
    expect(decodeJsonText(text)).toBe(text);
  });

  it('stores no escape jsonb refuses and round-trips any string, keys included', () => {
    for (let i = 0; i < 2000; i++) {
      const value = { [randomString()]: [randomString(), { k: randomString() }] };
      const stored = jsonb(value);
      expect(stored).not.toMatch(/(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f])/i);
      expect(JSON.parse(decodeJsonText(stored))).toEqual(value);
    }
  });
});

describe('request JSON limits', () => {
  const nested = (n: number) => '['.repeat(n) + ']'.repeat(n);

  it('measures depth outside strings only', () => {
    expect(jsonDepthExceeds(nested(512), 512)).toBe(false);
    expect(jsonDepthExceeds(nested(513), 512)).toBe(true);
    expect(jsonDepthExceeds(JSON.stringify({ s: '['.repeat(2000) }), 512)).toBe(false);
    expect(jsonDepthExceeds(`{"s":"\\\\",${'"x":['.repeat(600)}`, 512)).toBe(true);
    expect(jsonDepthExceeds(`{"s":"\\"[[[[","a":${nested(3)}}`, 2)).toBe(true);
  });

  it('finds unstorable strings and keys outside the carried members', () => {
    const body = {
      input: { '\u0000': '\ud800' },
      metadata: { k: 'a\u0000', '\udc00': 1 },
      ok: 'fine',
    };
    expect(mayHoldUnstorable(JSON.stringify(body))).toBe(true);
    expect(mayHoldUnstorable(JSON.stringify({ a: '\n', b: '😀' }))).toBe(false);
    expect(unstorableStrings(body, { input: true }).map((f) => f.path)).toEqual([
      ['metadata', 'k'],
      ['metadata', '\udc00'],
    ]);
    expect(unstorableStrings(['\ud83d\ude00', 'x\ud800'], undefined).map((f) => f.path)).toEqual([
      [1],
    ]);
  });

  it('keeps the graph values of a protocol command and checks the rest', () => {
    const nul = 'a\u0000';
    const command = {
      id: 1,
      method: nul,
      params: {
        input: { [nul]: nul },
        config: { tags: [nul], configurable: { user: nul, checkpoint_id: nul } },
        responses: [{ interrupt_id: nul, response: nul }],
        response: nul,
        update: [[nul, nul]],
        goto: nul,
        metadata: { tag: nul },
      },
    };
    expect(unstorableStrings(command, CARRIED_PROTOCOL_COMMAND).map((f) => f.path)).toEqual([
      ['method'],
      ['params', 'config', 'configurable', 'checkpoint_id'],
      ['params', 'responses', 0, 'interrupt_id'],
      ['params', 'goto'],
      ['params', 'metadata', 'tag'],
    ]);
  });

  it("carries a Send's input in a run's goto and checks its node name", () => {
    const nul = 'a\u0000';
    const body = {
      command: {
        resume: nul,
        goto: [nul, { node: nul, input: { [nul]: nul } }],
      },
    };
    expect(unstorableStrings(body, CARRIED_RUN).map((f) => f.path)).toEqual([
      ['command', 'goto', 0],
      ['command', 'goto', 1, 'node'],
    ]);
    const single = { command: { goto: { node: 'n', input: [nul] } } };
    expect(unstorableStrings(single, CARRIED_RUN)).toEqual([]);
  });
});
