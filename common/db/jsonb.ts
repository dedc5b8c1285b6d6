// Values for jsonb columns, able to hold any JSON string. PostgreSQL's jsonb refuses `\u0000` and
// lone surrogate escapes (`\ud800`), which JSON.stringify writes for NUL and lone surrogates, yet
// a graph's input, state and store values must come back exactly as they were sent. So such an
// escape is stored as U+FDD0 (a Unicode noncharacter, reserved for internal use) followed by its
// four hex digits, and U+FDD0 itself as two of them; every jsonb (and json) value read is decoded
// back. json columns hold any escape, but json_to_recordset() refuses them as jsonb does, so the
// run event log is written encoded too.
// Text without those escapes and without U+FDD0 (nearly all of it) is stored and read unchanged:
// the common case costs one search of the text each way.
import pg from 'pg';

const MARK = '\ufdd0';
/** `\\` pairs are matched so that an escaped backslash before `u0000` is not read as an escape. */
const ENCODE = /\\\\|\\u(0000|[dD][89a-fA-F][0-9a-fA-F]{2})|\ufdd0/g;
const ENCODED = /\ufdd0(\ufdd0|[0-9a-fA-F]{4})/g;

/** JSON text (from JSON.stringify) made storable in jsonb. */
export function encodeJsonText(text: string): string {
  if (!text.includes(MARK) && !(text.includes('\\u') && /\\u(?:0000|[dD][89a-fA-F])/.test(text)))
    return text;
  return text.replace(ENCODE, (match: string, hex: string | undefined) =>
    hex !== undefined ? MARK + hex : match === MARK ? MARK + MARK : match,
  );
}

/** jsonb output text back to the JSON text that was stored. */
export function decodeJsonText(text: string): string {
  if (!text.includes(MARK)) return text;
  return text.replace(ENCODED, (_match: string, code: string) =>
    code === MARK ? MARK : `\\u${code}`,
  );
}

/**
 * A text column filled from encoded JSON (`json_to_recordset` of a `jsonb()` parameter) back to
 * the string that was sent: the column holds the mark and its hex digits where NUL or a lone
 * surrogate was.
 */
export function decodeStoredText(text: string): string {
  if (!text.includes(MARK)) return text;
  return text.replace(ENCODED, (_match: string, code: string) =>
    code === MARK ? MARK : String.fromCharCode(parseInt(code, 16)),
  );
}

/** A value as a jsonb parameter: `$n::jsonb` (or a jsonb column) takes it as it is. */
export function jsonb(value: unknown): string {
  return encodeJsonText(JSON.stringify(value) ?? 'null');
}

type Oid = Parameters<typeof pg.types.setTypeParser>[0];
const JSON_OID = 114 as unknown as Oid;
const JSONB_OID = 3802 as unknown as Oid;

/** Every json and jsonb value read through `pg` is decoded (see above). */
export function decodeJsonOnRead(): void {
  const parse = (text: string): unknown => JSON.parse(decodeJsonText(text));
  pg.types.setTypeParser(JSON_OID, parse);
  pg.types.setTypeParser(JSONB_OID, parse);
}
