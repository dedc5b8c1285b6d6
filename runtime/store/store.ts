// SQL for the store: items addressed by (namespace, key), their embeddings, expiry.
import {
  SqlParams,
  jsonb,
  whereClause,
  type Pool,
  type PoolClient,
} from '../../common/db/index.js';
import { MAX_INT4 } from '../../common/limits/index.js';
import { cubeArrayLiteral, similaritySql, squaredNorm } from './vectors.js';

type Queryable = Pool | PoolClient;

export interface ItemRow {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  score?: number | null;
}

export interface ItemVector {
  field: string;
  part: number;
  embedding: number[];
}

export interface PutRow {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  ttlMinutes: number | null;
  /** Replaces the item's embeddings; an empty list leaves it unindexed. */
  vectors: ItemVector[];
}

/** A condition on one (possibly dotted) field of the value. */
export interface FieldCondition {
  path: string[];
  op: '=' | '<>' | '>' | '>=' | '<' | '<=';
  value: unknown;
}

export interface SearchQuery {
  prefix: string[];
  conditions: FieldCondition[];
  limit: number;
  offset: number;
  /** Unit-length query embedding; results are then ranked by cosine similarity. */
  vector: number[] | undefined;
  refresh: boolean;
}

export interface NamespaceQuery {
  /** Labels to match from the start; `*` matches any label. */
  prefix: string[];
  /** Labels to match at the end; `*` matches any label. */
  suffix: string[];
  maxDepth: number | undefined;
  limit: number;
  offset: number;
}

const ITEM_COLUMNS = 'i.namespace, i.key, i.value, i.created_at, i.updated_at';
const LIVE = '(i.expires_at IS NULL OR i.expires_at > now())';
const EXPIRY = (minutes: string) =>
  `CASE WHEN ${minutes}::float8 IS NULL THEN NULL ELSE now() + make_interval(secs => ${minutes}::float8 * 60) END`;

export const joinNamespace = (namespace: string[]) => namespace.join('.');

/** The namespace equals the prefix or lies below it: a range of the "C"-ordered joined text. */
function prefixCondition(prefix: string[], params: SqlParams): string | undefined {
  if (!prefix.length) return undefined;
  const joined = joinNamespace(prefix);
  // '/' is the byte after '.', so [p + '.', p + '/') holds exactly the namespaces below p.
  return `(i.prefix = ${params.add(joined)} OR (i.prefix >= ${params.add(`${joined}.`)} AND i.prefix < ${params.add(`${joined}/`)}))`;
}

function fieldCondition(condition: FieldCondition, params: SqlParams): string {
  // Keys are stored encoded (see common/db/jsonb.ts), so the path is too.
  const path = condition.path.map((key) => JSON.parse(jsonb(key)) as string);
  const field = `i.value #> ${params.add(path)}::text[]`;
  const value = `${params.add(jsonb(condition.value))}::jsonb`;
  if (condition.op === '=') return `${field} = ${value}`;
  if (condition.op === '<>') return `${field} IS DISTINCT FROM ${value}`;
  // jsonb orders values of different types by type; a range only compares like with like.
  return `(jsonb_typeof(${field}) = jsonb_typeof(${value}) AND ${field} ${condition.op} ${value})`;
}

function labelConditions(query: NamespaceQuery, params: SqlParams): string[] {
  const out: string[] = [];
  if (query.prefix.length) out.push(`cardinality(i.namespace) >= ${query.prefix.length}`);
  query.prefix.forEach((label, index) => {
    if (label !== '*') out.push(`i.namespace[${index + 1}] = ${params.add(label)}`);
  });
  if (!query.prefix.includes('*')) {
    const range = prefixCondition(query.prefix, params);
    if (range) out.push(range);
  }
  const tail = query.suffix.length;
  if (tail) out.push(`cardinality(i.namespace) >= ${tail}`);
  query.suffix.forEach((label, index) => {
    if (label !== '*')
      out.push(
        `i.namespace[cardinality(i.namespace) - ${tail - 1 - index}] = ${params.add(label)}`,
      );
  });
  return out;
}

export class ItemStore {
  constructor(private readonly pool: Pool) {}

  /** Inserts or replaces an item (keeping its creation time) and its embeddings. */
  async put(row: PutRow, db: PoolClient): Promise<void> {
    const prefix = joinNamespace(row.namespace);
    await db.query(
      `INSERT INTO store_items (prefix, key, namespace, value, ttl_minutes, expires_at)
       VALUES ($1, $2, $3, $4, $5::float8, ${EXPIRY('$5')})
       ON CONFLICT (prefix, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now(),
         ttl_minutes = EXCLUDED.ttl_minutes, expires_at = EXCLUDED.expires_at,
         -- an expired item that was not swept yet is replaced as if it were new
         created_at = CASE WHEN store_items.expires_at <= now() THEN now() ELSE store_items.created_at END`,
      [prefix, row.key, row.namespace, jsonb(row.value), row.ttlMinutes],
    );
    await db.query('DELETE FROM store_vectors WHERE prefix = $1 AND key = $2', [prefix, row.key]);
    if (row.vectors.length) {
      await db.query(
        `INSERT INTO store_vectors (prefix, key, field, part, embedding, norm2)
         SELECT $1, $2, field, part, embedding::cube[], norm2
         FROM unnest($3::text[], $4::int[], $5::text[], $6::float8[]) AS v(field, part, embedding, norm2)`,
        [
          prefix,
          row.key,
          row.vectors.map((v) => v.field),
          row.vectors.map((v) => v.part),
          row.vectors.map((v) => cubeArrayLiteral(v.embedding)),
          row.vectors.map((v) => squaredNorm(v.embedding)),
        ],
      );
    }
  }

  async get(namespace: string[], key: string, refresh: boolean): Promise<ItemRow | undefined> {
    const { rows } = await this.pool.query<ItemRow>(
      `WITH hit AS (
         SELECT ${ITEM_COLUMNS}, i.prefix FROM store_items i
         WHERE i.prefix = $1 AND i.key = $2 AND ${LIVE}),
       touched AS (
         UPDATE store_items s SET expires_at = now() + make_interval(secs => s.ttl_minutes * 60)
         FROM hit WHERE $3 AND s.prefix = hit.prefix AND s.key = hit.key AND s.ttl_minutes IS NOT NULL)
       SELECT namespace, key, value, created_at, updated_at FROM hit`,
      [joinNamespace(namespace), key, refresh],
    );
    return rows[0];
  }

  async delete(namespace: string[], key: string, db: Queryable = this.pool): Promise<void> {
    await db.query('DELETE FROM store_items WHERE prefix = $1 AND key = $2', [
      joinNamespace(namespace),
      key,
    ]);
  }

  async search(query: SearchQuery): Promise<ItemRow[]> {
    const params = new SqlParams();
    const conditions = [LIVE];
    const prefix = prefixCondition(query.prefix, params);
    if (prefix) conditions.push(prefix);
    for (const c of query.conditions) conditions.push(fieldCondition(c, params));
    let score = '';
    let order = 'i.updated_at DESC, i.prefix, i.key';
    if (query.vector) {
      // Best match over the item's indexed texts; unindexed items come last.
      const similarity = similaritySql(
        'v.embedding',
        'v.norm2',
        params.add(cubeArrayLiteral(query.vector)),
        params.add(squaredNorm(query.vector)),
      );
      score = `, (SELECT max(${similarity}) FROM store_vectors v
                  WHERE v.prefix = i.prefix AND v.key = i.key) AS score`;
      order = `score DESC NULLS LAST, ${order}`;
    }
    const { rows } = await this.pool.query<ItemRow & { prefix: string }>(
      `SELECT ${ITEM_COLUMNS}, i.prefix${score} FROM store_items i ${whereClause(conditions)}
       ORDER BY ${order} LIMIT ${params.add(query.limit)} OFFSET ${params.add(query.offset)}`,
      params.values,
    );
    if (query.refresh && rows.length) {
      await this.pool.query(
        `UPDATE store_items s SET expires_at = now() + make_interval(secs => s.ttl_minutes * 60)
         FROM unnest($1::text[], $2::text[]) AS hit(prefix, key)
         WHERE s.prefix = hit.prefix AND s.key = hit.key AND s.ttl_minutes IS NOT NULL`,
        [rows.map((r) => r.prefix), rows.map((r) => r.key)],
      );
    }
    return rows.map(({ prefix: _prefix, ...row }) => row);
  }

  async listNamespaces(query: NamespaceQuery): Promise<string[][]> {
    const params = new SqlParams();
    const conditions = [LIVE, ...labelConditions(query, params)];
    const depth =
      query.maxDepth === undefined
        ? 'i.namespace'
        : `i.namespace[1:${params.add(Math.min(query.maxDepth, MAX_INT4))}::int]`;
    const { rows } = await this.pool.query<{ namespace: string[] }>(
      `SELECT DISTINCT ${depth} AS namespace FROM store_items i ${whereClause(conditions)}
       ORDER BY namespace LIMIT ${params.add(query.limit)} OFFSET ${params.add(query.offset)}`,
      params.values,
    );
    return rows.map((r) => r.namespace);
  }

  /** Deletes up to `limit` expired items; replicas sweeping at once skip each other's rows. */
  async sweepExpired(limit: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM store_items WHERE (prefix, key) IN (
         SELECT prefix, key FROM store_items WHERE expires_at <= now()
         ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)`,
      [limit],
    );
    return rowCount ?? 0;
  }
}
