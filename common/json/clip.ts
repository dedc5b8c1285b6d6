// Cutting JSON text to a depth instead of refusing it: for bodies whose senders drop a whole
// batch on a 4xx (trace ingest), where one run's deep value would otherwise lose its neighbours.
import { MAX_JSON_DEPTH } from '../limits/index.js';

/** What stands in for an array or object that nested deeper than the limit. */
export const CLIPPED_JSON = `[cut: nested deeper than ${MAX_JSON_DEPTH} levels]`;

export interface ClippedText {
  text: string;
  /** How many arrays or objects were replaced by `CLIPPED_JSON`. */
  clipped: number;
}

/**
 * JSON text in which every array or object that opens deeper than `max` (the text's own value
 * is level 1) is replaced by the string `CLIPPED_JSON`. One pass over the text, no parsing, so a
 * body nested a million deep costs what its length costs. Text that is not JSON stays text that
 * is not JSON: an unclosed deep value is cut to the end, and the parser then reports it.
 */
export function clipJsonDepth(text: string, max = MAX_JSON_DEPTH): ClippedText {
  // Nesting `max + 1` deep takes at least 2 * (max + 1) characters.
  if (text.length <= 2 * max) return { text, clipped: 0 };
  const parts: string[] = [];
  let kept = 0;
  let clipped = 0;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i);
      if (i < 0) break;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (depth < max) {
        depth++;
        continue;
      }
      const end = closingBracket(text, i);
      parts.push(text.slice(kept, i), JSON.stringify(CLIPPED_JSON));
      clipped++;
      kept = end < 0 ? text.length : end + 1;
      if (end < 0) break;
      i = end;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  if (clipped === 0) return { text, clipped };
  parts.push(text.slice(kept));
  return { text: parts.join(''), clipped };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/** Index of the bracket closing the array or object opened at `open`, or -1. */
function closingBracket(text: string, open: number): number {
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

/** Index of the quote closing the string opened at `open`, or -1. */
export function closingQuote(text: string, open: number): number {
  for (let at = open; ;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}
