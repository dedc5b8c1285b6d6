// The `langgraph.json` schema, as the official CLI defines it. Unknown keys are errors so that a
// typo never silently turns a setting off.
import { z } from 'zod';
import { MAX_TTL_MINUTES } from '../../common/limits/index.js';

const GraphEntry = z.union([
  z.string().min(1),
  z.strictObject({ path: z.string().min(1), description: z.string().optional() }),
]);

const CorsConfig = z.strictObject({
  allow_origins: z.array(z.string()).optional(),
  allow_methods: z.array(z.string()).optional(),
  allow_headers: z.array(z.string()).optional(),
  allow_credentials: z.boolean().optional(),
  allow_origin_regex: z.string().optional(),
  expose_headers: z.array(z.string()).optional(),
  max_age: z.number().int().nonnegative().optional(),
});

const HttpConfig = z.strictObject({
  app: z.string().optional(),
  disable_assistants: z.boolean().optional(),
  disable_threads: z.boolean().optional(),
  disable_runs: z.boolean().optional(),
  disable_store: z.boolean().optional(),
  disable_mcp: z.boolean().optional(),
  disable_a2a: z.boolean().optional(),
  disable_meta: z.boolean().optional(),
  disable_ui: z.boolean().optional(),
  disable_webhooks: z.boolean().optional(),
  cors: CorsConfig.nullable().optional(),
  configurable_headers: z
    .strictObject({
      includes: z.array(z.string()).optional(),
      excludes: z.array(z.string()).optional(),
    })
    .nullable()
    .optional(),
  logging_headers: z
    .strictObject({
      includes: z.array(z.string()).optional(),
      excludes: z.array(z.string()).optional(),
    })
    .nullable()
    .optional(),
  middleware_order: z.enum(['auth_first', 'middleware_first']).optional(),
  enable_custom_route_auth: z.boolean().optional(),
  mount_prefix: z.string().optional(),
});

const WebhooksConfig = z.strictObject({
  env_prefix: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  url: z
    .strictObject({
      require_https: z.boolean().optional(),
      allowed_domains: z.array(z.string()).optional(),
      allowed_ports: z.array(z.number().int().min(1).max(65535)).optional(),
      max_url_length: z.number().int().positive().optional(),
      disable_loopback: z.boolean().optional(),
      // Graphdock: private (RFC 1918, ULA, CGNAT) destinations; refused unless set to false.
      disable_private_ips: z.boolean().optional(),
    })
    .optional(),
});

const StoreConfig = z.strictObject({
  index: z
    .strictObject({
      dims: z.number().int().positive(),
      embed: z.string(),
      fields: z.array(z.string()).optional(),
    })
    .optional(),
  ttl: z
    .strictObject({
      refresh_on_read: z.boolean().optional(),
      default_ttl: z.number().positive().max(MAX_TTL_MINUTES).nullable().optional(),
      sweep_interval_minutes: z.number().positive().nullable().optional(),
    })
    .optional(),
});

const CheckpointerConfig = z.strictObject({
  path: z.string().optional(),
  ttl: z
    .strictObject({
      strategy: z.enum(['delete', 'keep_latest']).optional(),
      default_ttl: z.number().positive().max(MAX_TTL_MINUTES).nullable().optional(),
      sweep_interval_minutes: z.number().positive().nullable().optional(),
      sweep_limit: z.number().int().positive().optional(),
    })
    .nullable()
    .optional(),
  serde: z.record(z.string(), z.unknown()).optional(),
});

const SecurityRequirements = z.array(z.record(z.string(), z.array(z.string())));

// `auth.openapi` describes the custom auth in the served OpenAPI document.
const AuthConfig = z.strictObject({
  path: z.string().min(1).optional(),
  disable_studio_auth: z.boolean().optional(),
  openapi: z
    .strictObject({
      securitySchemes: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
      security: SecurityRequirements.optional(),
      paths: z.record(z.string(), z.record(z.string(), SecurityRequirements)).optional(),
    })
    .optional(),
});

export const LanggraphConfigSchema = z.strictObject({
  graphs: z.record(z.string().min(1), GraphEntry),
  env: z.union([z.string(), z.record(z.string(), z.string()), z.array(z.string())]).optional(),
  dependencies: z.array(z.string()).optional(),
  node_version: z.string().optional(),
  python_version: z.string().optional(),
  api_version: z.string().optional(),
  base_image: z.string().optional(),
  image_distro: z.string().optional(),
  pip_config_file: z.string().optional(),
  pip_installer: z.string().optional(),
  source: z.record(z.string(), z.unknown()).optional(),
  dockerfile_lines: z.array(z.string()).optional(),
  keep_pkg_tools: z.union([z.boolean(), z.array(z.string())]).optional(),
  store: StoreConfig.optional(),
  checkpointer: CheckpointerConfig.optional(),
  auth: AuthConfig.optional(),
  encryption: z.record(z.string(), z.unknown()).optional(),
  http: HttpConfig.optional(),
  webhooks: WebhooksConfig.optional(),
  ui: z.record(z.string(), z.string()).optional(),
  // `shared`: packages the page provides to the UI bundles instead of each bundling its own.
  ui_config: z.object({ shared: z.array(z.string()).optional() }).optional(),
  $schema: z.string().optional(),
});

export type LanggraphConfig = z.infer<typeof LanggraphConfigSchema>;
export type HttpSettings = z.infer<typeof HttpConfig>;
export type AuthSettings = z.infer<typeof AuthConfig>;
