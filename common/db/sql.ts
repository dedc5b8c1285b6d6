/** Collects positional parameters while a statement is assembled from optional clauses. */
export class SqlParams {
  readonly values: unknown[] = [];

  /** Adds a value and returns its placeholder (`$n`). */
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/**
 * SQL one store hands another to run inside its own statement (as a CTE): `sql(first)` numbers
 * its parameters from `$first`, in the order of `values`. A statement that a run's fenced write
 * embeds honours `onlyIf` (a condition of the embedding statement): it writes nothing unless
 * that holds.
 */
export interface EmbeddedStatement {
  sql: (first: number, onlyIf?: string) => string;
  values: unknown[];
}

/** A read another store runs inside its own statement; its `columns` come back in that row. */
export interface EmbeddedRead extends EmbeddedStatement {
  columns: readonly string[];
}

/** An embedded read without parameters of its own: it refers to the embedding row's columns. */
export interface ColumnRead {
  columns: readonly string[];
  sql: string;
}

/** Joins optional conditions into a WHERE clause (empty when there are none). */
export function whereClause(conditions: string[]): string {
  return conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
}

/**
 * A timestamptz column as UTC text (`YYYY-MM-DD HH:MM:SS[.ffffff]`), for rows that go straight
 * to the wire: `isoFromUtcText` makes it what `toISOString()` gives, with no Date parsed only to
 * be printed again.
 */
export function utcText(column: string): string {
  return `(${column} AT TIME ZONE 'UTC')::text`;
}

/** `utcText` output as `toISOString()` prints the same instant (milliseconds, truncated). */
export function isoFromUtcText(text: string): string {
  const millis = text.length > 20 ? text.slice(20, 23).padEnd(3, '0') : '000';
  return `${text.slice(0, 10)}T${text.slice(11, 19)}.${millis}Z`;
}
