// Standard Webhooks signatures: HMAC-SHA256 over "{webhook-id}.{webhook-timestamp}.{body}",
// base64, as `v1,<signature>`. Several secrets (space separated) sign with each, for rotation.
import { ConfigFileError } from '../config/index.js';
import { createHmac } from 'node:crypto';

/** A start-up error: the CLI prints its message and exits. */
export class WebhookSecretError extends ConfigFileError {
  override name = 'WebhookSecretError';
}

const PREFIX = 'whsec_';

export class WebhookSigner {
  private constructor(private readonly keys: Buffer[]) {}

  /** Parses `whsec_<base64>` secrets; undefined or blank means no signing. */
  static fromSecrets(value: string | undefined, source: string): WebhookSigner | undefined {
    const secrets = (value ?? '').split(/\s+/).filter(Boolean);
    if (!secrets.length) return undefined;
    const keys = secrets.map((secret, i) => {
      const encoded = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
      const key = Buffer.from(encoded, 'base64');
      // Round-tripping catches text that is not base64 (Buffer.from silently skips bad characters).
      if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || key.length < 16)
        throw new WebhookSecretError(
          `${source}: secret ${i + 1} must be "whsec_" followed by at least 16 base64-encoded random bytes`,
        );
      return key;
    });
    return new WebhookSigner(keys);
  }

  sign(id: string, timestampSeconds: number, body: string): string {
    const content = `${id}.${timestampSeconds}.${body}`;
    return this.keys
      .map((key) => `v1,${createHmac('sha256', key).update(content).digest('base64')}`)
      .join(' ');
  }
}
