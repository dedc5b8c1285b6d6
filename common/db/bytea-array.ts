// A fast text parser for bytea[] (any depth), the shape the checkpointer reads blobs in.
import pg from 'pg';

type Nested = (Buffer | null | Nested)[];
type Parser = (text: string) => unknown;

/**
 * pg's own parser walks the array text in JavaScript and decodes each byte by hand; checkpoint
 * reads spend most of their client time there. In hex output (PostgreSQL's default) an element
 * is `"\\x<hex>"` or NULL, and hex never holds a quote or a brace, so a scan by `indexOf` and
 * Buffer's native hex decoding give the same arrays. Anything else goes to `fallback`.
 */
export function parseByteaArray(text: string, fallback: Parser): unknown {
  if (text.charCodeAt(0) !== 123 /* { */) return fallback(text);
  const stack: Nested[] = [];
  let current: Nested | undefined;
  let root: Nested | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 123 /* { */) {
      const inner: Nested = [];
      if (current) {
        current.push(inner);
        stack.push(current);
      } else if (root) return fallback(text);
      else root = inner;
      current = inner;
    } else if (c === 125 /* } */ && current) {
      current = stack.pop();
    } else if (c === 44 /* , */ && current) {
      continue;
    } else if (c === 34 /* " */ && current && text.startsWith('\\\\x', i + 1)) {
      const end = text.indexOf('"', i + 4);
      if (end < 0) return fallback(text);
      current.push(Buffer.from(text.slice(i + 4, end), 'hex'));
      i = end;
    } else if (c === 78 /* N */ && current && text.startsWith('NULL', i)) {
      current.push(null);
      i += 3;
    } else {
      return fallback(text);
    }
  }
  return root && !current && !stack.length ? root : fallback(text);
}

/** Makes `pg` parse bytea[] columns with parseByteaArray; pg's parser stays the fallback. */
export function useFastByteaArrays(): void {
  // Array types are not among pg's named builtins.
  const BYTEA_ARRAY_OID = 1001 as unknown as Parameters<typeof pg.types.setTypeParser>[0];
  const original = pg.types.getTypeParser(BYTEA_ARRAY_OID, 'text') as Parser;
  if ((original as { fast?: true }).fast) return;
  const fast = Object.assign((text: string) => parseByteaArray(text, original), { fast: true });
  pg.types.setTypeParser(BYTEA_ARRAY_OID, fast);
}
