// The store's rules: namespaces, TTL defaults and refresh, embedding on write, filters and
// semantic search. Shared by the HTTP routes and by graphs (through GraphdockStore).
import { withTransaction, type Pool } from '../../common/db/index.js';
import { badRequest, invalid } from '../../common/errors/index.js';
import { normalise, textsToEmbed, type Embedder } from './embeddings.js';
import type { FieldCondition, ItemRow, ItemStore, ItemVector } from './store.js';

export interface StoreIndexSettings {
  dims: number;
  /** Field paths embedded by default (`$` is the whole value). */
  fields: string[];
  embedder: Embedder;
}

export interface StoreSettings {
  /** Minutes an item lives when a put names no TTL; null: forever. */
  defaultTtlMinutes: number | null;
  /** Whether reads push an item's expiry back unless the reader says otherwise. */
  refreshOnRead: boolean;
  index: StoreIndexSettings | undefined;
}

export interface StoreServiceDeps {
  pool: Pool;
  items: ItemStore;
  settings: StoreSettings;
}

export interface PutOptions {
  index?: false | string[] | null | undefined;
  ttl?: number | null | undefined;
}

export interface SearchOptions {
  filter?: Record<string, unknown> | null | undefined;
  limit?: number | undefined;
  offset?: number | undefined;
  query?: string | null | undefined;
  refreshTtl?: boolean | null | undefined;
}

export interface NamespaceOptions {
  prefix?: string[] | null | undefined;
  suffix?: string[] | null | undefined;
  maxDepth?: number | null | undefined;
  limit?: number | undefined;
  offset?: number | undefined;
}

const OPERATORS: Record<string, FieldCondition['op']> = {
  $eq: '=',
  $ne: '<>',
  $gt: '>',
  $gte: '>=',
  $lt: '<',
  $lte: '<=',
};

function isOperatorObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((k) => k.startsWith('$'));
}

/** `{"a.b": 1, "n": {"$gt": 3}}` → conditions on `value #> '{a,b}'` and `value #> '{n}'`. */
export function filterConditions(filter: Record<string, unknown>): FieldCondition[] {
  const out: FieldCondition[] = [];
  for (const [field, expected] of Object.entries(filter)) {
    const path = field.split('.');
    if (!isOperatorObject(expected)) {
      out.push({ path, op: '=', value: expected });
      continue;
    }
    for (const [name, value] of Object.entries(expected)) {
      const op = OPERATORS[name];
      if (!op) {
        throw invalid(
          ['body', 'filter', field],
          `Unknown filter operator "${name}"; use one of ${Object.keys(OPERATORS).join(', ')}`,
        );
      }
      out.push({ path, op, value });
    }
  }
  return out;
}

export function validateNamespace(namespace: string[], where = 'namespace'): void {
  if (!namespace.length) throw badRequest('Namespace is required');
  namespace.forEach((label, index) => {
    if (typeof label !== 'string' || !label.length)
      throw invalid(['body', where, index], 'Namespace labels cannot be empty');
    if (label.includes('.'))
      throw invalid(['body', where, index], "Namespace labels cannot contain periods ('.')");
  });
}

export class StoreService {
  constructor(private readonly deps: StoreServiceDeps) {}

  get semanticSearch(): boolean {
    return this.deps.settings.index !== undefined;
  }

  async put(
    namespace: string[],
    key: string,
    value: Record<string, unknown>,
    options: PutOptions = {},
  ): Promise<void> {
    validateNamespace(namespace);
    const ttl = options.ttl === undefined ? this.deps.settings.defaultTtlMinutes : options.ttl;
    // Embedding calls a model: done before the transaction so no connection waits on it.
    const vectors = await this.embed(value, options.index);
    await withTransaction(this.deps.pool, (db) =>
      this.deps.items.put({ namespace, key, value, ttlMinutes: ttl, vectors }, db),
    );
  }

  get(namespace: string[], key: string, refreshTtl?: boolean | null): Promise<ItemRow | undefined> {
    return this.deps.items.get(namespace, key, refreshTtl ?? this.deps.settings.refreshOnRead);
  }

  delete(namespace: string[], key: string): Promise<void> {
    validateNamespace(namespace);
    return this.deps.items.delete(namespace, key);
  }

  async search(prefix: string[], options: SearchOptions = {}): Promise<ItemRow[]> {
    let vector: number[] | undefined;
    if (options.query) {
      const index = this.deps.settings.index;
      if (!index) {
        throw badRequest(
          'Semantic search needs an embedding function: configure store.index in langgraph.json',
        );
      }
      vector = normalise(await index.embedder.embedQuery(options.query), index.dims);
    }
    return this.deps.items.search({
      prefix,
      conditions: filterConditions(options.filter ?? {}),
      limit: options.limit ?? 10,
      offset: options.offset ?? 0,
      vector,
      refresh: options.refreshTtl ?? this.deps.settings.refreshOnRead,
    });
  }

  listNamespaces(options: NamespaceOptions = {}): Promise<string[][]> {
    return this.deps.items.listNamespaces({
      prefix: options.prefix ?? [],
      suffix: options.suffix ?? [],
      maxDepth: options.maxDepth ?? undefined,
      limit: options.limit ?? 100,
      offset: options.offset ?? 0,
    });
  }

  sweepExpired(limit = 1000): Promise<number> {
    return this.deps.items.sweepExpired(limit);
  }

  private async embed(
    value: Record<string, unknown>,
    index: false | string[] | null | undefined,
  ): Promise<ItemVector[]> {
    const settings = this.deps.settings.index;
    if (!settings || index === false) return [];
    const texts = textsToEmbed(value, index ?? settings.fields);
    if (!texts.length) return [];
    const embeddings = await settings.embedder.embedDocuments(texts.map((t) => t.text));
    if (embeddings.length !== texts.length) {
      throw new Error(
        `the embedding function returned ${embeddings.length} vectors for ${texts.length} texts`,
      );
    }
    return texts.map((t, i) => ({
      field: t.field,
      part: t.part,
      embedding: normalise(embeddings[i] ?? [], settings.dims),
    }));
  }
}
