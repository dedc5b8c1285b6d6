// Limits on JSON that arrives from clients, checked before any work is done with it: how deep it
// nests, and which strings PostgreSQL cannot hold (NUL, lone UTF-16 surrogates). Pure functions;
// the HTTP layers decide what to answer.
import { z } from 'zod';
import { MAX_JSON_DEPTH } from '../limits/index.js';
import { deepOpening } from './scan.js';

/** What a body nested too deep is told (`json_too_deep`). */
export const JSON_TOO_DEEP = `JSON nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`;

/**
 * Whether JSON text nests deeper than `max` arrays/objects. Scans the raw text, so a body that
 * would overflow a recursive reader or PostgreSQL's stack is refused before it is parsed.
 */
export function jsonDepthExceeds(text: string, max = MAX_JSON_DEPTH): boolean {
  // Nesting `max + 1` deep takes at least 2 * (max + 1) characters.
  return text.length > 2 * max && deepOpening(text, max) >= 0;
}

/**
 * Whether JSON text may hold a string PostgreSQL cannot store: the escapes `\u0000` or
 * `\uD800`-`\uDFFF` (raw NUL is not valid JSON, and decoded text holds no lone surrogate). A
 * cheap test on the raw text; false means none, true means look (`unstorableStrings`). Valid
 * surrogate pairs written as escapes also match; the walk then finds nothing.
 */
export function mayHoldUnstorable(text: string): boolean {
  return text.includes('\\u') && UNSTORABLE_ESCAPE.test(text);
}
const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why PostgreSQL cannot store `text` in a text column or in jsonb; undefined when it can. */
export function unstorableReason(text: string): string | undefined {
  if (text.includes('\u0000')) return 'NUL characters (\\u0000) are not allowed here';
  if (LONE_SURROGATE.test(text))
    return 'Lone UTF-16 surrogates (\\ud800-\\udfff) are not valid Unicode';
  return undefined;
}

/**
 * A string PostgreSQL keeps as it is (names, filters, settings): a validation error naming the
 * field when it holds NUL or a lone surrogate, where a database error would otherwise be a 500.
 */
export const storableString = () =>
  z.string().superRefine((text, ctx) => {
    const reason = unstorableReason(text);
    if (reason) ctx.addIssue({ code: 'custom', message: reason });
  });

export interface UnstorableString {
  /** Where the string is: object keys and array indexes from the walked value. */
  path: (string | number)[];
  msg: string;
}

/**
 * Which parts of a value may hold any string: `true` for a whole subtree, an object for some of
 * its members (`'*'` for every array item or object member). Everything else must be storable.
 */
export type CarriedFields = true | { [member: string]: CarriedFields };

/**
 * The strings (values and object keys) of `value` that PostgreSQL cannot store, outside the
 * `carried` parts. Stops after `limit` findings. `value` is parsed JSON no deeper than the
 * depth limit, so the recursion is bounded.
 */
export function unstorableStrings(
  value: unknown,
  carried?: CarriedFields,
  limit = 20,
): UnstorableString[] {
  const found: UnstorableString[] = [];
  const walk = (node: unknown, path: (string | number)[], spec: CarriedFields | undefined) => {
    if (spec === true || found.length >= limit) return;
    if (typeof node === 'string') {
      const msg = unstorableReason(node);
      if (msg) found.push({ path, msg });
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) {
      node.forEach((item, index) => walk(item, [...path, index], spec?.['*']));
      return;
    }
    for (const [key, item] of Object.entries(node)) {
      const inner = spec?.[key] ?? spec?.['*'];
      const msg = inner === true ? undefined : unstorableReason(key);
      if (msg) found.push({ path: [...path, key], msg: `Key: ${msg}` });
      else walk(item, [...path, key], inner);
    }
  };
  walk(value, [], carried);
  return found;
}
/**
 * A list in a query string, as the SDKs send one: repeated parameters (the Python SDK) or one
 * JSON array (the JS SDK stringifies arrays). Empty values are dropped: the Python SDK sends
 * `stream_mode=` for none. Pipe the result into the schema of the items.
 */
export const queryList = () =>
  z
    .union([z.string(), z.array(z.string())])
    .transform((v) => (Array.isArray(v) ? v : [v]).filter(Boolean).flatMap(jsonArrayOrSelf));

function jsonArrayOrSelf(value: string): unknown[] {
  if (!value.startsWith('[')) return [value];
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) ? parsed : [value];
  } catch {
    return [value];
  }
}

/** A JSON object: not null, not an array. */
export const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export * from './carried.js';
export { CLIPPED_JSON, clipJsonDepth, type ClippedText } from './clip.js';
