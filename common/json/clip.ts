// Cutting JSON text to a depth instead of refusing it: for bodies whose senders drop a whole
// batch on a 4xx (trace ingest), where one run's deep value would otherwise lose its neighbours.
import { MAX_JSON_DEPTH } from '../limits/index.js';
import { closingBracket, deepOpening } from './scan.js';

/** What stands in for an array or object that nested deeper than the limit. */
export const CLIPPED_JSON = `[cut: nested deeper than ${MAX_JSON_DEPTH} levels]`;
const CLIPPED_TEXT = JSON.stringify(CLIPPED_JSON);

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
  // After a cut value the text is back at depth `max`.
  for (let at = deepOpening(text, max); at >= 0; at = deepOpening(text, max, kept, max)) {
    const end = closingBracket(text, at);
    parts.push(text.slice(kept, at), CLIPPED_TEXT);
    clipped++;
    kept = end < 0 ? text.length : end + 1;
    if (end < 0) break;
  }
  if (clipped === 0) return { text, clipped };
  parts.push(text.slice(kept));
  return { text: parts.join(''), clipped };
}
