// Wire shapes of /api/v1/bulk-exports/destinations (LangSmith's BulkExportDestination*).
import { z } from 'zod';
import { storableString } from '../../common/json/index.js';

export const DestinationCredentials = z.object({
  access_key_id: storableString().min(1).max(255),
  secret_access_key: storableString().min(1).max(2048),
  /** For temporary credentials (STS). */
  session_token: storableString().min(1).max(2048).nullish(),
});
export type DestinationCredentials = z.infer<typeof DestinationCredentials>;

export const DestinationConfigInput = z.object({
  bucket_name: storableString().min(3).max(63),
  /** Root prefix inside the bucket; leading and trailing slashes are ignored. */
  prefix: storableString().max(2048),
  /** Needed for AWS S3 (no endpoint_url). */
  region: storableString().min(1).max(64).nullish(),
  /** An S3-compatible endpoint; omitted for AWS S3. */
  endpoint_url: storableString().min(1).max(2048).nullish(),
  /** false: the endpoint already names the bucket (virtual-hosted), keys go straight under it. */
  include_bucket_in_prefix: z.boolean().default(true),
});
export type DestinationConfigInput = z.infer<typeof DestinationConfigInput>;

export const DestinationCreateRequest = z.object({
  destination_type: z.literal('s3'),
  display_name: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\p{L}\p{N}_\- ']+$/u, 'letters, digits, spaces, -, _ and apostrophes only'),
  config: DestinationConfigInput,
  /** Omitted only where the install allows the AWS SDK's default credential chain. */
  credentials: DestinationCredentials.nullish(),
});
export type DestinationCreateRequest = z.infer<typeof DestinationCreateRequest>;

export const DestinationPatchRequest = z.object({ credentials: DestinationCredentials });
export type DestinationPatchRequest = z.infer<typeof DestinationPatchRequest>;

export const DestinationConfig = z.object({
  bucket_name: z.string(),
  prefix: z.string(),
  region: z.string().nullable(),
  endpoint_url: z.string().nullable(),
  include_bucket_in_prefix: z.boolean(),
});
export type DestinationConfig = z.infer<typeof DestinationConfig>;

export const Destination = z.object({
  id: z.uuid(),
  tenant_id: z.uuid(),
  destination_type: z.literal('s3'),
  display_name: z.string(),
  config: DestinationConfig,
  created_at: z.string(),
  updated_at: z.string(),
  /** Names of the stored credential fields; their values are never returned. */
  credentials_keys: z.array(z.string()),
});
export type Destination = z.infer<typeof Destination>;

export const DestinationIdParams = z.object({ destination_id: z.uuid() });
