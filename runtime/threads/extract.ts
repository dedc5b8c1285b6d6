// `extract` of thread search (newer official servers and Python SDK): each alias names a path
// into a thread's values, metadata, config or interrupts, e.g. `values.messages[-1].content`,
// and each thread found carries what the paths lead to under `extracted`.

/** The columns a path may start from. */
export const EXTRACTABLE_COLUMNS = ['config', 'interrupts', 'metadata', 'values'] as const;
export const MAX_EXTRACT_PATHS = 10;

/** The column a path starts from (`values` of `values.messages[0]`). */
export function extractRoot(path: string): string {
  return path.split(/\.|\[/)[0] ?? '';
}

/**
 * What `path` leads to in `thread`, or null when it leads nowhere: a missing key, an index out
 * of range (negative ones count from the end), an index into what is not a list, a key into
 * what is not an object, or a key starting with `_`.
 */
export function extractPath(thread: Record<string, unknown>, path: string): unknown {
  const [root, ...parts] = path.split(/\.|\[/);
  if (!root || !(EXTRACTABLE_COLUMNS as readonly string[]).includes(root)) return null;
  let current: unknown = thread[root];
  for (const part of parts) {
    if (current === null || current === undefined) return null;
    if (!part) continue;
    if (part.startsWith('_')) return null;
    if (part.endsWith(']')) {
      const index = part.slice(0, -1);
      if (!/^-?\d+$/.test(index) || !Array.isArray(current)) return null;
      const i = Number(index);
      current = current[i < 0 ? current.length + i : i];
    } else if (typeof current === 'object' && !Array.isArray(current)) {
      current = Object.hasOwn(current, part) ? (current as Record<string, unknown>)[part] : null;
    } else return null;
  }
  return current ?? null;
}
