type DateToString<V> = V extends Date ? string : V;
export type Dated<T> = { [K in keyof T]: DateToString<T[K]> };

/** Rows carry Dates; the wire carries ISO strings. */
export function isoDates<T extends object>(row: T): Dated<T> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row))
    out[key] = value instanceof Date ? value.toISOString() : value;
  return out as Dated<T>;
}
