// Bulk export destinations against a real S3-compatible server (MinIO with IAM users): the test
// write and every failure message of the spec, credentials sealed at rest and never answered,
// PATCH that stores nothing on failure and needs WORKSPACES_MANAGE, workspace isolation, the
// addressing rules, and key rotation of the sealed credentials.
import { randomBytes, randomUUID } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../common/logging/index.js';
import {
  CredentialCipher,
  DEFAULT_S3_SETTINGS,
  DestinationService,
  DestinationStore,
  parseKeyring,
} from '../../exports/index.js';
import { useS3Server, type S3Credentials } from '../support/s3.js';
import { runCli } from '../support/server.js';
import { TRACES_BOOTSTRAP_KEY, useTraceApi } from '../support/traces.js';

const BUCKET = 'exports';
const OTHER_BUCKET = 'elsewhere';
const KEY_V1 = `v1:${randomBytes(32).toString('base64')}`;

const s3 = useS3Server({ buckets: [BUCKET, OTHER_BUCKET] });
const api = useTraceApi({ env: { GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS: KEY_V1 } });

type Json = Record<string, unknown>;

async function call(
  method: string,
  path: string,
  options: { json?: unknown; key?: string; tenant?: string | null } = {},
): Promise<{ status: number; body: Json; text: string }> {
  const headers = new Headers({ 'x-api-key': options.key ?? TRACES_BOOTSTRAP_KEY });
  const tenant = options.tenant === undefined ? api.workspaceId : options.tenant;
  if (tenant) headers.set('x-tenant-id', tenant);
  if (options.json !== undefined) headers.set('content-type', 'application/json');
  const res = await fetch(`${api.api.url}/api/v1/bulk-exports/destinations${path}`, {
    method,
    headers,
    ...(options.json !== undefined ? { body: JSON.stringify(options.json) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Json, text };
}

function createBody(
  credentials: S3Credentials | undefined,
  config: Partial<{
    bucket_name: string;
    prefix: string;
    endpoint_url: string;
    region: string;
    include_bucket_in_prefix: boolean;
  }> = {},
) {
  return {
    destination_type: 's3',
    display_name: 'MinIO exports',
    config: { bucket_name: BUCKET, prefix: 'graphdock/runs', endpoint_url: s3.endpoint, ...config },
    ...(credentials ? { credentials } : {}),
  };
}

const uniquePrefix = () => `p-${randomUUID().slice(0, 8)}`;

describe('creating a destination', () => {
  it('answers the destination without its credentials after a test write it cleans up', async () => {
    const prefix = uniquePrefix();
    const { status, body, text } = await call('POST', '', {
      json: createBody(s3.writer, { prefix: `/${prefix}/` }),
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      tenant_id: api.workspaceId,
      destination_type: 's3',
      display_name: 'MinIO exports',
      config: {
        bucket_name: BUCKET,
        prefix: `/${prefix}/`,
        endpoint_url: s3.endpoint,
        region: null,
        include_bucket_in_prefix: true,
      },
      credentials_keys: ['access_key_id', 'secret_access_key'],
    });
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(body.created_at as string).toISOString()).toBe(body.created_at);
    expect(body.updated_at).toBe(body.created_at);
    expect(text).not.toContain(s3.writer.secret_access_key);
    expect(text).not.toContain(s3.writer.access_key_id);
    expect(body).not.toHaveProperty('credentials');
    // The check object went under <prefix>/tmp/ (slashes around the prefix ignored) and is gone.
    expect(await s3.listKeys(BUCKET, `${prefix}/`)).toEqual([]);

    const one = await call('GET', `/${body.id as string}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(body);
    const list = await call('GET', '');
    expect(list.status).toBe(200);
    expect(list.body).toContainEqual(body);
  });

  it('leaves the check object under <prefix>/tmp/ when delete is denied', async () => {
    const prefix = uniquePrefix();
    const { status } = await call('POST', '', { json: createBody(s3.noDelete, { prefix }) });
    expect(status).toBe(200);
    const keys = await s3.listKeys(BUCKET, `${prefix}/`);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(new RegExp(`^${prefix}/tmp/[^/]+\\.txt$`));
  });

  it.each([
    ['credentials that may not write', () => createBody(s3.noWrite), 'Access denied'],
    [
      'a wrong secret',
      () => createBody({ ...s3.writer, secret_access_key: 'wrong-secret-0123456789' }),
      'Access denied',
    ],
    [
      'an access key id that does not exist',
      () => createBody(s3.unknown),
      'Key ID you provided does not exist',
    ],
    [
      'a bucket that does not exist',
      () => createBody(s3.writer, { bucket_name: 'no-such-bucket' }),
      'Bucket is not valid',
    ],
    [
      'an endpoint nothing listens at',
      () => createBody(s3.writer, { endpoint_url: 'http://127.0.0.1:1' }),
      'Invalid endpoint',
    ],
    [
      'an HTTP endpoint that is not S3 (the api itself)',
      () => createBody(s3.writer, { endpoint_url: api.api.url }),
      'Invalid endpoint',
    ],
    [
      'an endpoint that is not a URL',
      () => createBody(s3.writer, { endpoint_url: 'minio:9000' }),
      'Invalid endpoint',
    ],
  ])('refuses %s with 400 and stores nothing', async (_what, body, message) => {
    const before = (await call('GET', '')).body as unknown as unknown[];
    const { status, body: answer } = await call('POST', '', { json: body() });
    expect({ status, answer }).toEqual({ status: 400, answer: { detail: message } });
    expect((await call('GET', '')).body).toHaveLength(before.length);
  });

  it('needs a region without endpoint_url, credentials unless the install allows none, and storable strings', async () => {
    const noRegion = await call('POST', '', {
      json: { ...createBody(s3.writer), config: { bucket_name: BUCKET, prefix: '' } },
    });
    expect(noRegion.status).toBe(422);
    expect(noRegion.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'config', 'region'], type: 'missing' }),
    ]);
    // Strings PostgreSQL or the S3 client cannot take: 422 at the field, no test write.
    for (const [field, body] of [
      ['prefix', createBody(s3.writer, { prefix: 'p\u0000' })],
      ['endpoint_url', createBody(s3.writer, { endpoint_url: 'http://x\u0000' })],
      ['access_key_id', createBody({ ...s3.writer, access_key_id: 'k\ud800' })],
    ] as const) {
      const refused = await call('POST', '', { json: body });
      expect(refused.status, field).toBe(422);
      expect(JSON.stringify(refused.body.detail), field).toContain(`"${field}"`);
    }
    const noCredentials = await call('POST', '', { json: createBody(undefined) });
    expect(noCredentials.status).toBe(422);
    expect(noCredentials.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'credentials'], type: 'missing' }),
    ]);
  });

  it('writes into the endpoint as the bucket when include_bucket_in_prefix is false', async () => {
    // The endpoint already names the bucket: keys go straight under it, the bucket not repeated.
    const prefix = uniquePrefix();
    const { status } = await call('POST', '', {
      json: createBody(s3.noDelete, {
        endpoint_url: `${s3.endpoint}/${OTHER_BUCKET}`,
        bucket_name: BUCKET,
        prefix,
        include_bucket_in_prefix: false,
      }),
    });
    expect(status).toBe(200);
    expect(await s3.listKeys(OTHER_BUCKET, `${prefix}/tmp/`)).toHaveLength(1);
    expect(await s3.listKeys(BUCKET, `${prefix}/`)).toEqual([]);
  });
});

describe('stored credentials', () => {
  it('are sealed: the row holds neither the key id nor the secret, only field names', async () => {
    const credentials = { ...s3.writer, session_token: undefined };
    const { body } = await call('POST', '', { json: createBody(credentials) });
    const { rows } = await api.pool.query<Record<string, unknown>>(
      'SELECT * FROM bulk_export_destinations WHERE id = $1',
      [body.id],
    );
    const row = rows[0]!;
    const raw = JSON.stringify(row) + (row.credentials_sealed as Buffer).toString('latin1');
    expect(raw).not.toContain(s3.writer.secret_access_key);
    expect(raw).not.toContain(s3.writer.access_key_id);
    expect(row.credentials_key_id).toBe('v1');
    expect(row.credentials_keys).toEqual(['access_key_id', 'secret_access_key']);
    // Sealed with the configured key: opening it with that key gives the credentials back.
    const service = serviceWith(KEY_V1);
    const opened = await service.open(api.workspaceId, body.id as string);
    await opened.client.send(
      new PutObjectCommand({ Bucket: opened.bucket, Key: opened.key('opened.txt'), Body: 'x' }),
    );
    opened.close();
    expect(await s3.getText(BUCKET, 'graphdock/runs/opened.txt')).toBe('x');
  });

  it('stay readable through a key rotation and move to the new key with the re-seal sweep', async () => {
    const { body } = await call('POST', '', { json: createBody(s3.writer) });
    const id = body.id as string;
    const keyV2 = `v2:${randomBytes(32).toString('base64')}`;
    // New key first, old key still listed: old rows open, new seals use v2.
    const rotated = serviceWith(`${keyV2},${KEY_V1}`);
    (await rotated.open(api.workspaceId, id)).close();
    expect(await rotated.resealOldKeys(1000)).toBeGreaterThanOrEqual(1);
    const { rows } = await api.pool.query<{ credentials_key_id: string }>(
      'SELECT credentials_key_id FROM bulk_export_destinations WHERE id = $1',
      [id],
    );
    expect(rows[0]!.credentials_key_id).toBe('v2');
    // After the sweep the old key can go.
    const onlyNew = serviceWith(keyV2);
    (await onlyNew.open(api.workspaceId, id)).close();
    await expect(serviceWith(KEY_V1).open(api.workspaceId, id)).rejects.toThrow(
      /key v2 is not configured/,
    );
    // A sealed value moved onto another row does not open (the row's identity is bound in).
    const other = (await call('POST', '', { json: createBody(s3.writer) })).body.id as string;
    await api.pool.query(
      `UPDATE bulk_export_destinations SET (credentials_key_id, credentials_sealed) =
         (SELECT credentials_key_id, credentials_sealed FROM bulk_export_destinations WHERE id = $1)
       WHERE id = $2`,
      [id, other],
    );
    await expect(onlyNew.open(api.workspaceId, other)).rejects.toThrow(/authenticate/);
  });
});

describe('replacing credentials (PATCH)', () => {
  async function sealedState(id: string) {
    const { rows } = await api.pool.query<Record<string, unknown>>(
      `SELECT credentials_sealed, credentials_key_id, credentials_keys, updated_at, config
       FROM bulk_export_destinations WHERE id = $1`,
      [id],
    );
    return rows[0]!;
  }

  it('validates the new credentials with the stored config, and stores nothing on failure', async () => {
    const prefix = uniquePrefix();
    const created = (await call('POST', '', { json: createBody(s3.writer, { prefix }) })).body;
    const id = created.id as string;
    const before = await sealedState(id);

    for (const [credentials, message] of [
      [s3.noWrite, 'Access denied'],
      [s3.unknown, 'Key ID you provided does not exist'],
    ] as const) {
      const refused = await call('PATCH', `/${id}`, { json: { credentials } });
      expect({ status: refused.status, body: refused.body }).toEqual({
        status: 400,
        body: { detail: message },
      });
      expect(await sealedState(id)).toEqual(before);
    }

    // A session token the server never issued fails the test write too.
    const badToken = await call('PATCH', `/${id}`, {
      json: { credentials: { ...s3.noDelete, session_token: 'not-issued-by-this-server' } },
    });
    expect(badToken.status).toBe(400);
    expect(await sealedState(id)).toEqual(before);

    // Config in the body is not applied: PATCH replaces the credentials only.
    const ok = await call('PATCH', `/${id}`, {
      json: { credentials: s3.noDelete, config: { bucket_name: OTHER_BUCKET, prefix: 'moved' } },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      id,
      config: created.config,
      created_at: created.created_at,
      credentials_keys: ['access_key_id', 'secret_access_key'],
    });
    expect(ok.text).not.toContain(s3.noDelete.secret_access_key);
    expect(Date.parse(ok.body.updated_at as string)).toBeGreaterThan(
      Date.parse(created.updated_at as string),
    );
    // The test write used the stored config (same bucket and prefix), with the new identity
    // that may not delete: its check object is left there.
    expect(await s3.listKeys(BUCKET, `${prefix}/tmp/`)).toHaveLength(1);
    const after = await sealedState(id);
    expect(after.config).toEqual(before.config);
    expect(after.credentials_sealed).not.toEqual(before.credentials_sealed);
    // New export runs open the destination with the new credentials.
    const opened = await serviceWith(KEY_V1).open(api.workspaceId, id);
    const denied = await opened.client
      .send(new PutObjectCommand({ Bucket: opened.bucket, Key: opened.key('x'), Body: 'x' }))
      .then(() => 'ok');
    opened.close();
    expect(denied).toBe('ok');
  });

  it('needs WORKSPACES_MANAGE (403 naming it)', async () => {
    const id = (await call('POST', '', { json: createBody(s3.writer) })).body.id as string;
    const key = await api.tenancy.createApiKey(api.workspaceId, ['DEPLOYMENTS_MANAGE']);
    const refused = await call('PATCH', `/${id}`, { key, json: { credentials: s3.writer } });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('WORKSPACES_MANAGE');
    // The same key may still read.
    expect((await call('GET', `/${id}`, { key })).status).toBe(200);
  });
});

describe('workspaces', () => {
  it('see only their own destinations', async () => {
    const mine = (await call('POST', '', { json: createBody(s3.writer) })).body.id as string;
    const other = await api.newWorkspace(`dest-${randomUUID().slice(0, 6)}`);
    const as = { key: other.key, tenant: other.workspaceId };
    expect((await call('GET', '', as)).body).toEqual([]);
    expect((await call('GET', `/${mine}`, as)).status).toBe(404);
    const patch = await call('PATCH', `/${mine}`, { ...as, json: { credentials: s3.writer } });
    expect(patch.status).toBe(404);
    // Naming another workspace in X-Tenant-Id is refused outright.
    const crossed = await call('GET', '', { key: other.key, tenant: api.workspaceId });
    expect(crossed.status).toBe(403);
    const theirs = await call('POST', '', { ...as, json: createBody(s3.writer) });
    expect(theirs.body.tenant_id).toBe(other.workspaceId);
    const mineList = (await call('GET', '')).body as unknown as { id: string }[];
    expect(mineList.map((d) => d.id)).not.toContain(theirs.body.id);
  });

  it('need an API key', async () => {
    const res = await fetch(`${api.api.url}/api/v1/bulk-exports/destinations`);
    expect(res.status).toBe(401);
  });
});

function serviceWith(keys: string): DestinationService {
  return new DestinationService(
    new DestinationStore(api.pool),
    new CredentialCipher(parseKeyring(keys)),
    { allowDefaultCredentials: false, s3: DEFAULT_S3_SETTINGS },
    createLogger({ level: 'silent' }),
  );
}

describe('an install that allows destinations without credentials', () => {
  // The api process finds the writer's keys where the AWS SDK's default chain looks first.
  const selfHosted = useTraceApi({
    env: () => ({
      GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS: KEY_V1,
      GRAPHDOCK_BULK_EXPORT_DEFAULT_CREDENTIALS: 'true',
      AWS_ACCESS_KEY_ID: s3.writer.access_key_id,
      AWS_SECRET_ACCESS_KEY: s3.writer.secret_access_key,
      AWS_EC2_METADATA_DISABLED: 'true',
    }),
  });

  it('writes with the default credential chain and stores no credentials', async () => {
    const prefix = uniquePrefix();
    const res = await fetch(`${selfHosted.api.url}/api/v1/bulk-exports/destinations`, {
      method: 'POST',
      headers: {
        'x-api-key': TRACES_BOOTSTRAP_KEY,
        'x-tenant-id': selfHosted.workspaceId,
        'content-type': 'application/json',
      },
      body: JSON.stringify(createBody(undefined, { prefix })),
    });
    const body = (await res.json()) as Json;
    expect(res.status).toBe(200);
    expect(body.credentials_keys).toEqual([]);
    const { rows } = await selfHosted.pool.query<{ credentials_sealed: Buffer | null }>(
      'SELECT credentials_sealed FROM bulk_export_destinations WHERE id = $1',
      [body.id],
    );
    expect(rows[0]!.credentials_sealed).toBeNull();
  });
});

describe('the key ring setting', () => {
  it('a malformed GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS stops `graphdock api` at start, naming it', async () => {
    const { code, output } = await runCli(['api', '--port', '0'], {
      DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/none',
      GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS: `k1:${randomBytes(16).toString('base64')}`,
    });
    expect(code).not.toBe(0);
    expect(output).toContain('GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS');
    expect(output).toContain('AES-256 needs 32');
  });
});
