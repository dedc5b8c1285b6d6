// `webhooks.headers` of langgraph.json, resolved once at start-up. Values may use
// `${{ env.NAME }}`, only for variables whose name starts with `webhooks.env_prefix`, so a
// config file cannot leak arbitrary process secrets to a webhook receiver.
import { ConfigFileError } from '../config/index.js';
export const DEFAULT_ENV_PREFIX = 'LG_WEBHOOK_';

/** A start-up error: the CLI prints its message and exits. */
export class WebhookHeadersError extends ConfigFileError {
  override name = 'WebhookHeadersError';
}

const TEMPLATE = /\$\{\{\s*([^}]*?)\s*\}\}/g;
const ENV_REFERENCE = /^env\.([A-Za-z_][A-Za-z0-9_]*)$/;
// Headers the sender owns: overriding them would break signatures or the HTTP framing.
const RESERVED = new Set([
  'content-length',
  'content-type',
  'host',
  'transfer-encoding',
  'connection',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
]);

export function resolveWebhookHeaders(
  headers: Record<string, string> | undefined,
  prefix: string = DEFAULT_ENV_PREFIX,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const resolved: Record<string, string> = {};
  for (const [name, template] of Object.entries(headers ?? {})) {
    const where = `webhooks.headers.${name}`;
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
      throw new WebhookHeadersError(`${where}: not a valid HTTP header name`);
    if (RESERVED.has(name.toLowerCase()))
      throw new WebhookHeadersError(`${where}: this header is set by the webhook sender`);
    resolved[name] = template.replace(TEMPLATE, (_match, expression: string) => {
      const reference = ENV_REFERENCE.exec(expression);
      if (!reference?.[1])
        throw new WebhookHeadersError(
          `${where}: unsupported template "\${{ ${expression} }}"; use \${{ env.NAME }}`,
        );
      const variable = reference[1];
      if (!variable.startsWith(prefix))
        throw new WebhookHeadersError(
          `${where}: environment variable ${variable} may not be used; only names starting with "${prefix}" (webhooks.env_prefix) are allowed`,
        );
      const value = env[variable];
      if (value === undefined)
        throw new WebhookHeadersError(`${where}: environment variable ${variable} is not set`);
      return value;
    });
    if (/[\r\n]/.test(resolved[name]))
      throw new WebhookHeadersError(`${where}: value contains a line break`);
  }
  return resolved;
}
