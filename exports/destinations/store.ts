// SQL of bulk_export_destinations. Every read and write names the tenant.
import type { Pool } from '../../common/db/index.js';
import type { DestinationConfig } from './schemas.js';

export interface DestinationRow {
  id: string;
  tenant_id: string;
  destination_type: 's3';
  display_name: string;
  config: DestinationConfig;
  credentials_key_id: string | null;
  credentials_sealed: Buffer | null;
  credentials_keys: string[];
  created_at: Date;
  updated_at: Date;
}

export interface SealedCredentials {
  keyId: string;
  value: Buffer;
  /** Names of the sealed fields, kept in clear for responses. */
  fields: string[];
}

const COLUMNS = `id, tenant_id, destination_type, display_name, config, credentials_key_id,
  credentials_sealed, credentials_keys, created_at, updated_at`;

export class DestinationStore {
  constructor(private readonly pool: Pool) {}

  async insert(row: {
    id: string;
    tenantId: string;
    displayName: string;
    config: DestinationConfig;
    credentials: SealedCredentials | undefined;
  }): Promise<DestinationRow> {
    const { rows } = await this.pool.query<DestinationRow>(
      `INSERT INTO bulk_export_destinations
         (id, tenant_id, destination_type, display_name, config, credentials_key_id,
          credentials_sealed, credentials_keys)
       VALUES ($1, $2, 's3', $3, $4, $5, $6, $7)
       RETURNING ${COLUMNS}`,
      [
        row.id,
        row.tenantId,
        row.displayName,
        JSON.stringify(row.config),
        row.credentials?.keyId ?? null,
        row.credentials?.value ?? null,
        row.credentials?.fields ?? [],
      ],
    );
    return rows[0]!;
  }

  async list(tenantId: string): Promise<DestinationRow[]> {
    const { rows } = await this.pool.query<DestinationRow>(
      `SELECT ${COLUMNS} FROM bulk_export_destinations WHERE tenant_id = $1
       ORDER BY created_at, id`,
      [tenantId],
    );
    return rows;
  }

  async get(tenantId: string, id: string): Promise<DestinationRow | undefined> {
    const { rows } = await this.pool.query<DestinationRow>(
      `SELECT ${COLUMNS} FROM bulk_export_destinations WHERE tenant_id = $1 AND id = $2`,
      [tenantId, id],
    );
    return rows[0];
  }

  /** Replaces the credentials only; undefined when the destination is gone. */
  async replaceCredentials(
    tenantId: string,
    id: string,
    credentials: SealedCredentials,
  ): Promise<DestinationRow | undefined> {
    const { rows } = await this.pool.query<DestinationRow>(
      `UPDATE bulk_export_destinations
       SET credentials_key_id = $3, credentials_sealed = $4, credentials_keys = $5,
           updated_at = now()
       WHERE tenant_id = $1 AND id = $2
       RETURNING ${COLUMNS}`,
      [tenantId, id, credentials.keyId, credentials.value, credentials.fields],
    );
    return rows[0];
  }

  /** Rows sealed with a key other than `currentKeyId`, oldest first, for the re-seal sweep. */
  async sealedWithOtherKey(currentKeyId: string, limit: number): Promise<DestinationRow[]> {
    const { rows } = await this.pool.query<DestinationRow>(
      `SELECT ${COLUMNS} FROM bulk_export_destinations
       WHERE credentials_key_id IS NOT NULL AND credentials_key_id <> $1
       ORDER BY updated_at, id LIMIT $2`,
      [currentKeyId, limit],
    );
    return rows;
  }

  /**
   * Re-seals one row's unchanged credentials with the current key. Guarded by the value read, so
   * a PATCH in between wins; does not touch updated_at (nothing a client sees changed).
   */
  async reseal(row: DestinationRow, keyId: string, value: Buffer): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE bulk_export_destinations SET credentials_key_id = $3, credentials_sealed = $4
       WHERE id = $1 AND credentials_sealed = $2`,
      [row.id, row.credentials_sealed, keyId, value],
    );
    return rowCount === 1;
  }
}
