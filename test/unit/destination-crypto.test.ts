// Sealing of bulk export destination credentials: the key ring's format, rotation (first seals,
// all open) and the authentication that refuses a changed value or another row's identity.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CredentialCipher, KeyringError, parseKeyring } from '../../exports/index.js';

const key = () => randomBytes(32).toString('base64');

describe('parseKeyring', () => {
  it('reads id:base64 pairs, the first being the newest', () => {
    const keys = parseKeyring(` new:${key()} , old:${key()},`);
    expect(keys.map((k) => k.id)).toEqual(['new', 'old']);
    expect(keys.every((k) => k.key.length === 32)).toBe(true);
    expect(parseKeyring('')).toEqual([]);
  });

  it.each([
    [`${key()}`, /id:base64/],
    [`k1:${randomBytes(16).toString('base64')}`, /16 bytes/],
    [`k1:${key()},k1:${key()}`, /twice/],
    [`bad id:${key()}`, /id:base64/],
  ])('refuses %s', (text, message) => {
    expect(() => parseKeyring(text)).toThrow(KeyringError);
    expect(() => parseKeyring(text)).toThrow(message);
  });
});

describe('CredentialCipher', () => {
  const plain = Buffer.from('{"access_key_id":"AKIA","secret_access_key":"s3cr3t"}');

  it('seals with the first key and opens with any listed key', () => {
    const [v1, v2] = [`v1:${key()}`, `v2:${key()}`];
    const old = new CredentialCipher(parseKeyring(v1));
    const sealed = old.seal(plain, 'row-a');
    expect(sealed.keyId).toBe('v1');
    expect(sealed.value.includes(Buffer.from('s3cr3t'))).toBe(false);
    const rotated = new CredentialCipher(parseKeyring(`${v2},${v1}`));
    expect(rotated.open(sealed, 'row-a')).toEqual(plain);
    expect(rotated.seal(plain, 'row-a').keyId).toBe('v2');
    expect(() => new CredentialCipher(parseKeyring(v2)).open(sealed, 'row-a')).toThrow(
      /v1 is not configured/,
    );
  });

  it('uses a fresh nonce each time and refuses a changed value or another identity', () => {
    const cipher = new CredentialCipher(parseKeyring(`k:${key()}`));
    const a = cipher.seal(plain, 'row-a');
    expect(cipher.seal(plain, 'row-a').value.equals(a.value)).toBe(false);
    expect(() => cipher.open(a, 'row-b')).toThrow();
    const flipped = Buffer.from(a.value);
    flipped[flipped.length - 1]! ^= 1;
    expect(() => cipher.open({ ...a, value: flipped }, 'row-a')).toThrow();
  });

  it('without keys refuses to seal', () => {
    const cipher = new CredentialCipher([]);
    expect(cipher.configured).toBe(false);
    expect(() => cipher.seal(plain, 'x')).toThrow(KeyringError);
  });
});
