// Server-side prepared statements for hot queries, chosen by the pool rather than by each call.
import pg from 'pg';

export interface PreparedStatementOptions {
  /** Executions of the same text before it is prepared (pgjdbc's `prepareThreshold`). */
  threshold: number;
  /** Most statements ever prepared per pool, so texts with inlined values cannot grow it. */
  maxStatements: number;
  /** Texts tracked while counting towards the threshold. */
  maxTracked: number;
  /**
   * Most characters of prepared text per pool. The server keeps each prepared statement's parse
   * tree and plans on every connection that ran it, about 100 bytes per character of text for
   * the statement that ends a run (340 KB for its 3,500 characters), and that statement's text
   * varies with the number of checkpoint rows a run writes: without a bound, graphs of many
   * shapes would make each connection hold a plan per shape.
   */
  maxPreparedChars: number;
}

const DEFAULTS: PreparedStatementOptions = {
  threshold: 3,
  maxStatements: 500,
  maxTracked: 5000,
  maxPreparedChars: 128 * 1024,
};

/**
 * PostgreSQL parses and plans an unnamed statement on every execution; a named one once per
 * connection. For the short queries a request makes, that is most of the database's work, and
 * the client saves re-reading each result's row description too. A text is prepared once it has
 * run `threshold` times with parameters (so it is a single statement). Texts that select `*` are
 * left alone: a prepared `*` fails once a migration adds a column under a running replica.
 */
export class StatementNames {
  private readonly seen = new Map<string, number>();
  private readonly names = new Map<string, string>();
  private readonly options: PreparedStatementOptions;
  private preparedChars = 0;

  constructor(options: Partial<PreparedStatementOptions> = {}) {
    this.options = { ...DEFAULTS, ...options };
  }

  /** The name to run `text` under, or undefined to run it unnamed. */
  nameFor(text: string): string | undefined {
    const named = this.names.get(text);
    if (named !== undefined) return named;
    const count = (this.seen.get(text) ?? 0) + 1;
    if (count < this.options.threshold) {
      if (this.seen.size < this.options.maxTracked || this.seen.has(text))
        this.seen.set(text, count);
      return undefined;
    }
    if (
      this.names.size >= this.options.maxStatements ||
      this.preparedChars + text.length > this.options.maxPreparedChars ||
      SELECTS_STAR.test(text)
    )
      return undefined;
    this.seen.delete(text);
    this.preparedChars += text.length;
    const name = `graphdock_${this.names.size + 1}`;
    this.names.set(text, name);
    return name;
  }

  get prepared(): number {
    return this.names.size;
  }
}

const SELECTS_STAR = /\b(?:SELECT|RETURNING)\s+(?:\w+\.)?\*/i;

/** A pg Client class whose parameterised, unnamed queries are named by `names`. */
export function preparingClient(names: StatementNames): typeof pg.Client {
  class PreparingClient extends pg.Client {}
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with apply below
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  PreparingClient.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [config, values] = args;
    if (typeof config === 'string' && Array.isArray(values) && values.length) {
      const name = names.nameFor(config);
      if (name) args[0] = { text: config, name };
    } else if (isPlainQuery(config)) {
      const params = config.values ?? values;
      if (Array.isArray(params) && params.length) {
        const name = names.nameFor(config.text);
        if (name) args[0] = { ...config, name };
      }
    }
    return query.apply(this, args);
  } as pg.Client['query'];
  return PreparingClient;
}

function isPlainQuery(
  config: unknown,
): config is { text: string; name?: string; values?: unknown[]; submit?: unknown } {
  if (typeof config !== 'object' || config === null) return false;
  const query = config as { text?: unknown; name?: unknown; submit?: unknown };
  // Submittables (cursors, streams) manage their own protocol; named queries are already named.
  return typeof query.text === 'string' && query.name === undefined && query.submit === undefined;
}
