// Scanning JSON text without parsing it: where strings end, where brackets close, where nesting
// first goes past a depth. Shared by the depth check and the depth cut.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/** Index of the quote closing the string opened at `open`, or -1. */
function closingQuote(text: string, open: number): number {
  for (let at = open; ;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

/**
 * Index of the first `[` or `{` at or after `from` that opens deeper than `max`, the text being
 * `depth` levels deep at `from`; -1 when there is none or a string is left unterminated (the
 * parser reports that). Strings are skipped with `indexOf`, so the cost follows the tokens.
 */
export function deepOpening(text: string, max: number, from = 0, depth = 0): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i);
      if (i < 0) return -1;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return i;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return -1;
}

/** Index of the bracket closing the array or object opened at `open`, or -1. */
export function closingBracket(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i);
      if (i < 0) return -1;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      depth++;
    } else if ((c === CLOSE_ARRAY || c === CLOSE_OBJECT) && --depth === 0) {
      return i;
    }
  }
  return -1;
}
