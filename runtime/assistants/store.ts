// SQL for assistants and their version log. Nothing outside this file writes these tables.
import {
  SqlParams,
  jsonb,
  isoFromUtcText,
  utcText,
  whereClause,
  type EmbeddedStatement,
  type Pool,
  type PoolClient,
} from '../../common/db/index.js';
import type { AuthFilter, Visible } from '../auth/index.js';
import type { Dated } from '../state/index.js';
import { ASSISTANT_FIELDS, type AssistantField } from './schemas.js';

export interface AssistantRow {
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string | null;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
  version: number;
  created_at: Date;
  updated_at: Date;
}

/** Every column of `assistants`, named: a prepared statement of `*` breaks when a column is added. */
const ASSISTANT_COLUMNS =
  'assistant_id, graph_id, name, description, config, context, metadata, version, created_at, updated_at';

export interface AssistantValues {
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string | null;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

export interface AssistantFilter {
  metadata?: Record<string, unknown> | null | undefined;
  graph_id?: string | null | undefined;
  name?: string | null | undefined;
  /** The caller's authorization filter (see runtime/auth). */
  auth?: AuthFilter | undefined;
}

type Queryable = Pool | PoolClient;

function filterConditions(filter: AssistantFilter, params: SqlParams): string[] {
  const conditions: string[] = [];
  if (filter.metadata && Object.keys(filter.metadata).length) {
    conditions.push(`metadata @> ${params.add(jsonb(filter.metadata))}::jsonb`);
  }
  if (filter.auth) conditions.push(`metadata @> ${params.add(jsonb(filter.auth))}::jsonb`);
  if (filter.graph_id) conditions.push(`graph_id = ${params.add(filter.graph_id)}`);
  if (filter.name) conditions.push(`name ILIKE ${params.add(`%${escapeLike(filter.name)}%`)}`);
  return conditions;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

const TIMESTAMPS = ['created_at', 'updated_at'] as const;

/** The selected fields, timestamps as UTC text (see `utcText`). */
function wireColumns(select: readonly AssistantField[] | null | undefined): string {
  const chosen = select?.length
    ? select.filter((f) => ASSISTANT_FIELDS.includes(f))
    : ASSISTANT_FIELDS;
  return chosen
    .map((f) => ((TIMESTAMPS as readonly string[]).includes(f) ? `${utcText(f)} AS ${f}` : f))
    .join(', ');
}

export class AssistantStore {
  constructor(private readonly pool: Pool) {}

  /** Whether the row exists and matches an authorization filter (see runtime/auth). */
  async visibility(id: string, filter: AuthFilter): Promise<Visible> {
    const { rows } = await this.pool.query<{ visible: boolean }>(
      'SELECT metadata @> $2::jsonb AS visible FROM assistants WHERE assistant_id = $1',
      [id, jsonb(filter)],
    );
    return rows[0] === undefined ? 'missing' : rows[0].visible ? 'visible' : 'hidden';
  }

  /** Inserts the assistant and its version 1; returns undefined when the id is taken. */
  async insert(
    values: AssistantValues,
    db: Queryable = this.pool,
  ): Promise<AssistantRow | undefined> {
    const { rows } = await db.query<AssistantRow>(
      `WITH inserted AS (
         INSERT INTO assistants (assistant_id, graph_id, name, description, config, context, metadata)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (assistant_id) DO NOTHING
         RETURNING ${ASSISTANT_COLUMNS}
       ), logged AS (
         INSERT INTO assistant_versions (assistant_id, version, graph_id, name, description, config, context, metadata, created_at)
         SELECT assistant_id, version, graph_id, name, description, config, context, metadata, created_at FROM inserted
       )
       SELECT ${ASSISTANT_COLUMNS} FROM inserted`,
      [
        values.assistant_id,
        values.graph_id,
        values.name,
        values.description,
        jsonb(values.config),
        jsonb(values.context),
        jsonb(values.metadata),
      ],
    );
    return rows[0];
  }

  /**
   * `get` with the row's version (its `xmin`): every insert or update of the row, a delete and
   * re-create included, gives it a new one.
   */
  async getVersioned(
    assistantId: string,
  ): Promise<{ row: AssistantRow; rowVersion: string } | undefined> {
    const { rows } = await this.pool.query<AssistantRow & { row_version: string }>(
      `SELECT ${ASSISTANT_COLUMNS}, xmin::text AS row_version FROM assistants WHERE assistant_id = $1`,
      [assistantId],
    );
    const found = rows[0];
    if (!found) return undefined;
    const { row_version: rowVersion, ...row } = found;
    return { row, rowVersion };
  }

  /** A condition, for another store's statement, that the row still has version `rowVersion`. */
  unchangedCondition(assistantId: string, rowVersion: string): EmbeddedStatement {
    return {
      sql: (first) =>
        `EXISTS (SELECT 1 FROM assistants WHERE assistant_id = $${first} AND xmin = $${first + 1}::xid)`,
      values: [assistantId, rowVersion],
    };
  }

  async get(assistantId: string, db: Queryable = this.pool): Promise<AssistantRow | undefined> {
    const { rows } = await db.query<AssistantRow>(
      `SELECT ${ASSISTANT_COLUMNS} FROM assistants WHERE assistant_id = $1`,
      [assistantId],
    );
    return rows[0];
  }

  async search(
    filter: AssistantFilter & {
      limit: number;
      offset: number;
      sortBy: string;
      sortOrder: 'asc' | 'desc';
      select?: readonly AssistantField[] | null | undefined;
    },
  ): Promise<{ rows: Partial<Dated<AssistantRow>>[]; hasMore: boolean }> {
    const params = new SqlParams();
    const where = whereClause(filterConditions(filter, params));
    // Qualified: the timestamps sort as timestamps, not as the text selected under their names.
    const order = `assistants.${filter.sortBy} ${filter.sortOrder}, assistant_id ${filter.sortOrder}`;
    // One extra row tells whether another page exists without counting every match.
    const { rows } = await this.pool.query<Partial<Dated<AssistantRow>>>(
      `SELECT ${wireColumns(filter.select)} FROM assistants ${where}
       ORDER BY ${order} LIMIT ${params.add(filter.limit + 1)} OFFSET ${params.add(filter.offset)}`,
      params.values,
    );
    const page = rows.slice(0, filter.limit);
    for (const row of page)
      for (const field of TIMESTAMPS) {
        const text = row[field];
        if (text !== undefined) row[field] = isoFromUtcText(text);
      }
    return { rows: page, hasMore: rows.length > filter.limit };
  }

  async count(filter: AssistantFilter): Promise<number> {
    const params = new SqlParams();
    const { rows } = await this.pool.query<{ count: number }>(
      `SELECT count(*) AS count FROM assistants ${whereClause(filterConditions(filter, params))}`,
      params.values,
    );
    return rows[0]?.count ?? 0;
  }

  /** Appends a version built from the current one plus `patch`, and makes it current. */
  async addVersion(
    assistantId: string,
    patch: Partial<Omit<AssistantValues, 'assistant_id'>>,
    db: PoolClient,
  ): Promise<AssistantRow | undefined> {
    const current = await db.query<AssistantRow>(
      `SELECT ${ASSISTANT_COLUMNS} FROM assistants WHERE assistant_id = $1 FOR UPDATE`,
      [assistantId],
    );
    const row = current.rows[0];
    if (!row) return undefined;
    const { rows: maxRows } = await db.query<{ max: number }>(
      'SELECT max(version) AS max FROM assistant_versions WHERE assistant_id = $1',
      [assistantId],
    );
    const version = (maxRows[0]?.max ?? row.version) + 1;
    const next = {
      graph_id: patch.graph_id ?? row.graph_id,
      name: patch.name ?? row.name,
      description: patch.description === undefined ? row.description : patch.description,
      config: patch.config ?? row.config,
      context: patch.context ?? row.context,
      metadata: { ...row.metadata, ...(patch.metadata ?? {}) },
    };
    await db.query(
      `INSERT INTO assistant_versions (assistant_id, version, graph_id, name, description, config, context, metadata)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        assistantId,
        version,
        next.graph_id,
        next.name,
        next.description,
        jsonb(next.config),
        jsonb(next.context),
        jsonb(next.metadata),
      ],
    );
    const { rows } = await db.query<AssistantRow>(
      `UPDATE assistants SET graph_id = $2, name = $3, description = $4, config = $5, context = $6,
         metadata = $7, version = $8, updated_at = now()
       WHERE assistant_id = $1 RETURNING ${ASSISTANT_COLUMNS}`,
      [
        assistantId,
        next.graph_id,
        next.name,
        next.description,
        jsonb(next.config),
        jsonb(next.context),
        jsonb(next.metadata),
        version,
      ],
    );
    return rows[0];
  }

  async delete(assistantId: string, db: Queryable = this.pool): Promise<boolean> {
    const { rowCount } = await db.query('DELETE FROM assistants WHERE assistant_id = $1', [
      assistantId,
    ]);
    return (rowCount ?? 0) > 0;
  }

  async versions(
    assistantId: string,
    options: {
      metadata?: Record<string, unknown> | null | undefined;
      limit: number;
      offset: number;
    },
  ): Promise<Omit<AssistantRow, 'updated_at'>[]> {
    const params = new SqlParams();
    const conditions = [`assistant_id = ${params.add(assistantId)}`];
    if (options.metadata && Object.keys(options.metadata).length) {
      conditions.push(`metadata @> ${params.add(jsonb(options.metadata))}::jsonb`);
    }
    const { rows } = await this.pool.query<Omit<AssistantRow, 'updated_at'>>(
      `SELECT assistant_id, version, graph_id, name, description, config, context, metadata, created_at
       FROM assistant_versions ${whereClause(conditions)}
       ORDER BY version DESC LIMIT ${params.add(options.limit)} OFFSET ${params.add(options.offset)}`,
      params.values,
    );
    return rows;
  }

  /** Makes an existing version current again; undefined when the version does not exist. */
  async setLatest(assistantId: string, version: number): Promise<AssistantRow | undefined> {
    const { rows } = await this.pool.query<AssistantRow>(
      `UPDATE assistants a SET graph_id = v.graph_id, name = v.name, description = v.description,
         config = v.config, context = v.context, metadata = v.metadata, version = v.version, updated_at = now()
       FROM assistant_versions v
       WHERE a.assistant_id = $1 AND v.assistant_id = $1 AND v.version = $2
       RETURNING ${ASSISTANT_COLUMNS.split(', ')
         .map((column) => `a.${column}`)
         .join(', ')}`,
      [assistantId, version],
    );
    return rows[0];
  }
}
