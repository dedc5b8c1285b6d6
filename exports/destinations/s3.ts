// How a destination's config becomes S3 requests, and the test write that validates it.
//
// Addressing (LangSmith's rules, from its fsspec-style "bucket/key" paths):
// - no endpoint_url (AWS S3): the SDK's own choice, virtual-hosted `bucket.s3.<region>...`;
// - endpoint_url and include_bucket_in_prefix (default): path style `<endpoint>/<bucket>/<key>`,
//   what S3-compatible servers (MinIO, GCS XML, ...) accept on any host name;
// - endpoint_url that already names the bucket (include_bucket_in_prefix false): requests go to
//   `<endpoint>/<key>`, the bucket never added again.
import { randomUUID } from 'node:crypto';
import { DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { DestinationConfig, DestinationCredentials } from './schemas.js';

export interface S3Settings {
  /** Per request: connecting, and the whole request. */
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  maxAttempts: number;
}

export const DEFAULT_S3_SETTINGS: S3Settings = {
  connectTimeoutMs: 5_000,
  requestTimeoutMs: 30_000,
  maxAttempts: 3,
};

/** Where a destination's objects go: a client, the bucket parameter and the key prefix. */
export interface S3Target {
  client: S3Client;
  /** The `Bucket` of every command (the endpoint URL itself when it names the bucket). */
  bucket: string;
  /** The object key of `path` under the destination's prefix. */
  key(path: string): string;
}

/** The spec's messages for a failed test write, each answered with 400. */
export const DESTINATION_ERRORS = {
  accessDenied: 'Access denied',
  bucketInvalid: 'Bucket is not valid',
  unknownKeyId: 'Key ID you provided does not exist',
  invalidEndpoint: 'Invalid endpoint',
} as const;
export type DestinationErrorMessage = (typeof DESTINATION_ERRORS)[keyof typeof DESTINATION_ERRORS];

export class DestinationCheckError extends Error {
  override name = 'DestinationCheckError';
  constructor(
    readonly detail: DestinationErrorMessage,
    /** What the storage said, for the log only (the answer carries `detail`). */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${detail}: ${reason}`, options);
  }
}

/** The storage answered but failed (5xx, throttling): nothing to blame on the destination. */
export class DestinationUnavailableError extends Error {
  override name = 'DestinationUnavailableError';
}

/** A usable `http(s)://host[:port][/path]` endpoint, or undefined. */
export function parseEndpoint(text: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.search || url.hash || url.username || url.password) return undefined;
  return url;
}

export function normalizePrefix(prefix: string): string {
  return prefix.replace(/^\/+|\/+$/g, '');
}

export function s3Target(
  config: DestinationConfig,
  credentials: DestinationCredentials | undefined,
  settings: S3Settings = DEFAULT_S3_SETTINGS,
): S3Target {
  const endpoint = config.endpoint_url ? parseEndpoint(config.endpoint_url) : undefined;
  if (config.endpoint_url && !endpoint)
    throw new DestinationCheckError(DESTINATION_ERRORS.invalidEndpoint, 'not an http(s) URL');
  const bucketInEndpoint = endpoint !== undefined && !config.include_bucket_in_prefix;
  const client = new S3Client({
    // S3-compatible servers accept any region name; AWS's default keeps SigV4 well-formed.
    region: config.region ?? 'us-east-1',
    maxAttempts: settings.maxAttempts,
    requestHandler: {
      connectionTimeout: settings.connectTimeoutMs,
      requestTimeout: settings.requestTimeoutMs,
    },
    // Undefined: the SDK's default chain (environment, files, web identity, container, IMDS).
    credentials: credentials && {
      accessKeyId: credentials.access_key_id,
      secretAccessKey: credentials.secret_access_key,
      sessionToken: credentials.session_token ?? undefined,
    },
    ...(endpoint && !bucketInEndpoint ? { endpoint: endpoint.href, forcePathStyle: true } : {}),
    // The endpoint is the bucket: the SDK takes `Bucket` as the base URL and adds only the key.
    ...(bucketInEndpoint ? { bucketEndpoint: true } : {}),
    // Many S3-compatible servers reject the SDK's default trailing checksums on uploads.
    ...(endpoint
      ? { requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' }
      : {}),
  });
  const prefix = normalizePrefix(config.prefix);
  return {
    client,
    bucket: bucketInEndpoint ? endpoint.href.replace(/\/+$/, '') : config.bucket_name,
    key: (path) => (prefix ? `${prefix}/${path}` : path),
  };
}

const BODY = 'Graphdock bulk export destination check. Safe to delete.\n';

/**
 * Writes a small object under `<prefix>/tmp/` and deletes it when allowed; without delete
 * permission it stays there. Resolves to the key written; rejects with DestinationCheckError.
 */
export async function testWrite(
  target: S3Target,
): Promise<{ key: string; deleted: boolean; deleteError?: string }> {
  const key = target.key(`tmp/graphdock-destination-check-${randomUUID()}.txt`);
  try {
    const put = await target.client.send(
      new PutObjectCommand({
        Bucket: target.bucket,
        Key: key,
        Body: BODY,
        ContentType: 'text/plain',
      }),
    );
    // Every S3 PUT answers with an ETag; a web server that accepted the PUT did not store it.
    if (!put.ETag)
      throw new DestinationCheckError(DESTINATION_ERRORS.invalidEndpoint, 'PUT answered no ETag');
  } catch (err) {
    throw classify(err);
  }
  try {
    await target.client.send(new DeleteObjectCommand({ Bucket: target.bucket, Key: key }));
    return { key, deleted: true };
  } catch (err) {
    // s3:DeleteObject is optional: the object is left in tmp/.
    return { key, deleted: false, deleteError: describe(err) };
  }
}

const ACCESS_DENIED = new Set([
  'AccessDenied',
  'SignatureDoesNotMatch',
  'InvalidToken',
  'ExpiredToken',
  'TokenRefreshRequired',
  'InvalidSecurity',
  'AllAccessDisabled',
  'AccountProblem',
  'NotSignedUp',
  // The default credential chain found nothing (install without credentials).
  'CredentialsProviderError',
]);
const BUCKET_INVALID = new Set([
  'NoSuchBucket',
  'InvalidBucketName',
  'InvalidBucketState',
  // The bucket lives in another region than config.region says.
  'PermanentRedirect',
  'AuthorizationHeaderMalformed',
  'IllegalLocationConstraintException',
]);
const UNAVAILABLE = new Set(['SlowDown', 'ServiceUnavailable', 'InternalError', 'RequestTimeout']);

interface SdkError {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

function describe(err: unknown): string {
  const e = err as SdkError;
  const status = e.$metadata?.httpStatusCode;
  return `${e.name ?? 'Error'}${status ? ` (HTTP ${status})` : ''}: ${e.message ?? String(err)}`;
}

/** The spec's message for a failed PUT, or an unavailable error for a storage outage. */
export function classify(err: unknown): Error {
  if (err instanceof DestinationCheckError) return err;
  const e = err as SdkError;
  const name = e.name ?? '';
  const reason = describe(err);
  const fail = (detail: DestinationErrorMessage) =>
    new DestinationCheckError(detail, reason, { cause: err });
  if (name === 'InvalidAccessKeyId') return fail(DESTINATION_ERRORS.unknownKeyId);
  if (ACCESS_DENIED.has(name)) return fail(DESTINATION_ERRORS.accessDenied);
  if (BUCKET_INVALID.has(name)) return fail(DESTINATION_ERRORS.bucketInvalid);
  const status = e.$metadata?.httpStatusCode;
  if (UNAVAILABLE.has(name) || (status !== undefined && status >= 500))
    return new DestinationUnavailableError(reason, { cause: err });
  // No answer (refused, unknown host, TLS, timeout) or an answer that is not S3's.
  return fail(DESTINATION_ERRORS.invalidEndpoint);
}
