// API keys are random, shown once, and stored only as digests.
import { createHash, randomBytes } from 'node:crypto';

export const KEY_PREFIX_LENGTH = 10;

export function digestApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

export function generateApiKey(): string {
  return `gdk_${randomBytes(24).toString('base64url')}`;
}
