// Async iterables in tests: everything one yields, in order (Node 20 has no Array.fromAsync).
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}
