// Sealing of destination credentials at rest: AES-256-GCM (authenticated), a fresh 96-bit nonce
// per seal, and the row's identity as additional data so a sealed value copied onto another
// destination or tenant fails to open. A keyring, not a key: the first key seals, every key
// opens, so a new key can be put first without downtime and the old one dropped after a re-seal.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const ALGORITHM = 'aes-256-gcm';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** First byte of every sealed value, so another layout can be introduced later. */
const FORMAT_V1 = 1;

export interface EncryptionKey {
  id: string;
  key: Buffer;
}

export interface Sealed {
  keyId: string;
  /** format byte, nonce, GCM tag, ciphertext. */
  value: Buffer;
}

export class KeyringError extends Error {
  override name = 'KeyringError';
}

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Parses `id:base64,id:base64` (the newest first), as GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS holds
 * it. Each key is 32 random bytes, e.g. from `openssl rand -base64 32`.
 */
export function parseKeyring(text: string): EncryptionKey[] {
  const keys: EncryptionKey[] = [];
  for (const entry of text.split(',').map((e) => e.trim())) {
    if (!entry) continue;
    const colon = entry.indexOf(':');
    const id = colon > 0 ? entry.slice(0, colon) : '';
    if (!KEY_ID.test(id))
      throw new KeyringError(`a key must be "id:base64" with an id of [A-Za-z0-9._-]{1,64}`);
    const key = Buffer.from(entry.slice(colon + 1), 'base64');
    if (key.length !== 32)
      throw new KeyringError(`key ${id} is ${key.length} bytes after base64; AES-256 needs 32`);
    if (keys.some((k) => k.id === id)) throw new KeyringError(`key id ${id} appears twice`);
    keys.push({ id, key });
  }
  return keys;
}

export class CredentialCipher {
  private readonly byId: Map<string, Buffer>;

  constructor(private readonly keys: readonly EncryptionKey[]) {
    this.byId = new Map(keys.map((k) => [k.id, k.key]));
  }

  get configured(): boolean {
    return this.keys.length > 0;
  }

  /** The id of the key that seals; rows sealed with another one are due for a re-seal. */
  get currentKeyId(): string | undefined {
    return this.keys[0]?.id;
  }

  seal(plaintext: Buffer, associated: string): Sealed {
    const current = this.keys[0];
    if (!current) throw new KeyringError('no encryption key is configured');
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv(ALGORITHM, current.key, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(associated, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return {
      keyId: current.id,
      value: Buffer.concat([Buffer.of(FORMAT_V1), nonce, cipher.getAuthTag(), body]),
    };
  }

  open(sealed: Sealed, associated: string): Buffer {
    const key = this.byId.get(sealed.keyId);
    if (!key) throw new KeyringError(`encryption key ${sealed.keyId} is not configured`);
    const { value } = sealed;
    if (value[0] !== FORMAT_V1) throw new KeyringError('unknown sealed credentials format');
    const nonce = value.subarray(1, 1 + NONCE_BYTES);
    const tag = value.subarray(1 + NONCE_BYTES, 1 + NONCE_BYTES + TAG_BYTES);
    const decipher = createDecipheriv(ALGORITHM, key, nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(associated, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([
      decipher.update(value.subarray(1 + NONCE_BYTES + TAG_BYTES)),
      decipher.final(),
    ]);
  }
}
