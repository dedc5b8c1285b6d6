// Bulk export destinations: created and re-credentialed only after a test write succeeds, their
// credentials sealed at rest and never answered. Every call acts for one tenant (workspace).
import { randomUUID } from 'node:crypto';
import { AppError, invalid, notFound } from '../../common/errors/index.js';
import type { Logger } from '../../common/logging/index.js';
import type { CredentialCipher } from './crypto.js';
import {
  DestinationCheckError,
  DestinationUnavailableError,
  s3Target,
  testWrite,
  type S3Settings,
  type S3Target,
} from './s3.js';
import type {
  Destination,
  DestinationConfig,
  DestinationCreateRequest,
  DestinationCredentials,
} from './schemas.js';
import type { DestinationRow, DestinationStore, SealedCredentials } from './store.js';

/** The permission PATCH (credential rotation) needs. */
export const MANAGE_PERMISSION = 'WORKSPACES_MANAGE';

export interface DestinationSettings {
  /** Self-hosted installs: `credentials` may be omitted, the AWS SDK's default chain is used. */
  allowDefaultCredentials: boolean;
  s3: S3Settings;
}

/** Who calls: the workspace of the API key and the key's permissions. */
export interface Caller {
  tenantId: string;
  permissions: readonly string[];
}

/** A destination opened for writing, with the credentials stored at the moment it was opened. */
export interface OpenDestination extends S3Target {
  destination: Destination;
  close(): void;
}

const aad = (tenantId: string, id: string) => `bulk_export_destination:${tenantId}:${id}`;

export class DestinationService {
  constructor(
    private readonly store: DestinationStore,
    private readonly cipher: CredentialCipher,
    private readonly settings: DestinationSettings,
    private readonly logger: Logger,
  ) {}

  async create(caller: Caller, body: DestinationCreateRequest): Promise<Destination> {
    const config: DestinationConfig = {
      bucket_name: body.config.bucket_name,
      prefix: body.config.prefix,
      region: body.config.region ?? null,
      endpoint_url: body.config.endpoint_url ?? null,
      include_bucket_in_prefix: body.config.include_bucket_in_prefix,
    };
    if (!config.endpoint_url && !config.region)
      throw invalid(
        ['body', 'config', 'region'],
        'Field required for AWS S3 (a destination without endpoint_url)',
        'missing',
      );
    const credentials = body.credentials ?? undefined;
    if (!credentials && !this.settings.allowDefaultCredentials)
      throw invalid(
        ['body', 'credentials'],
        'Field required: credentials may be omitted only on self-hosted installations',
        'missing',
      );
    if (credentials) this.assertCanSeal();
    const id = randomUUID();
    await this.check(config, credentials, { tenant: caller.tenantId, destination: id });
    const row = await this.store.insert({
      id,
      tenantId: caller.tenantId,
      displayName: body.display_name,
      config,
      credentials: credentials && this.seal(caller.tenantId, id, credentials),
    });
    return toWire(row);
  }

  async list(caller: Caller): Promise<Destination[]> {
    return (await this.store.list(caller.tenantId)).map(toWire);
  }

  async get(caller: Caller, id: string): Promise<Destination> {
    return toWire(await this.row(caller.tenantId, id));
  }

  /**
   * Replaces the credentials only, after a test write with them and the stored config; nothing
   * is stored when it fails. Runs already executing keep the client they opened with.
   */
  async replaceCredentials(
    caller: Caller,
    id: string,
    credentials: DestinationCredentials,
  ): Promise<Destination> {
    if (!caller.permissions.includes(MANAGE_PERMISSION))
      throw new AppError('FORBIDDEN', `This API key lacks the ${MANAGE_PERMISSION} permission`);
    const current = await this.row(caller.tenantId, id);
    this.assertCanSeal();
    await this.check(current.config, credentials, { tenant: caller.tenantId, destination: id });
    const row = await this.store.replaceCredentials(
      caller.tenantId,
      id,
      this.seal(caller.tenantId, id, credentials),
    );
    if (!row) throw notFound('Destination not found');
    return toWire(row);
  }

  /**
   * Opens a destination for an export run with the credentials stored now: later rotations
   * reach runs that open it later, never one already writing.
   */
  async open(tenantId: string, id: string): Promise<OpenDestination> {
    const row = await this.row(tenantId, id);
    const target = s3Target(row.config, this.credentialsOf(row), this.settings.s3);
    return { ...target, destination: toWire(row), close: () => target.client.destroy() };
  }

  /**
   * Re-seals up to `batch` rows sealed with an older key using the current one, so an old key
   * can be dropped once this returns 0. Safe beside PATCH and on several replicas.
   */
  async resealOldKeys(batch = 100): Promise<number> {
    const current = this.cipher.currentKeyId;
    if (!current) return 0;
    let done = 0;
    for (const row of await this.store.sealedWithOtherKey(current, batch)) {
      const credentials = this.credentialsOf(row);
      if (!credentials) continue;
      const sealed = this.seal(row.tenant_id, row.id, credentials);
      if (await this.store.reseal(row, sealed.keyId, sealed.value)) done++;
    }
    return done;
  }

  private async row(tenantId: string, id: string): Promise<DestinationRow> {
    const row = await this.store.get(tenantId, id);
    if (!row) throw notFound('Destination not found');
    return row;
  }

  /** The test write; its failures become the spec's 400 answers. */
  private async check(
    config: DestinationConfig,
    credentials: DestinationCredentials | undefined,
    context: { tenant: string; destination: string },
  ): Promise<void> {
    let target: S3Target | undefined;
    try {
      target = s3Target(config, credentials, this.settings.s3);
      const result = await testWrite(target);
      this.logger.info({ ...context, ...result }, 'destination test write succeeded');
    } catch (err) {
      if (err instanceof DestinationCheckError) {
        this.logger.info({ ...context, reason: err.reason }, 'destination test write refused');
        throw new AppError('BAD_REQUEST', err.detail, { cause: err });
      }
      if (err instanceof DestinationUnavailableError) {
        this.logger.warn({ ...context, reason: err.message }, 'destination storage unavailable');
        throw new AppError(
          'UNAVAILABLE',
          `The destination's storage is unavailable: ${err.message}`,
        );
      }
      throw err;
    } finally {
      target?.client.destroy();
    }
  }

  private assertCanSeal(): void {
    if (!this.cipher.configured)
      throw new AppError(
        'UNAVAILABLE',
        'Destination credentials cannot be stored: no encryption key is configured ' +
          '(GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS)',
      );
  }

  private seal(tenantId: string, id: string, credentials: DestinationCredentials) {
    const fields = Object.entries(credentials)
      .filter(([, value]) => value !== undefined && value !== null)
      .map(([name]) => name);
    const plain = Object.fromEntries(
      fields.map((f) => [f, credentials[f as keyof typeof credentials]]),
    );
    const sealed = this.cipher.seal(Buffer.from(JSON.stringify(plain), 'utf8'), aad(tenantId, id));
    return { keyId: sealed.keyId, value: sealed.value, fields } satisfies SealedCredentials;
  }

  private credentialsOf(row: DestinationRow): DestinationCredentials | undefined {
    if (!row.credentials_key_id || !row.credentials_sealed) return undefined;
    const plain = this.cipher.open(
      { keyId: row.credentials_key_id, value: row.credentials_sealed },
      aad(row.tenant_id, row.id),
    );
    return JSON.parse(plain.toString('utf8')) as DestinationCredentials;
  }
}

function toWire(row: DestinationRow): Destination {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    destination_type: row.destination_type,
    display_name: row.display_name,
    config: row.config,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    credentials_keys: row.credentials_keys,
  };
}
