import { createCipheriv, randomBytes } from 'node:crypto';
import { loadConfig } from '../config/load-config.js';
import { CryptoService, DecryptionError } from './crypto.service.js';

function serviceWith(key: string, previous: string[] = []): CryptoService {
  const { config } = loadConfig({
    NODE_ENV: 'test',
    ENCRYPTION_KEY: key,
    ENCRYPTION_PREVIOUS_KEYS: previous.join(','),
  });
  return new CryptoService(config);
}

const OWNER = '8c1f0a5e-0000-4000-8000-000000000001';
const keyA = randomBytes(32).toString('hex');
const keyB = randomBytes(32).toString('base64');

describe('CryptoService', () => {
  it('round-trips a value, with a fresh IV each time', () => {
    const crypto = serviceWith(keyA);
    const token = 'EAAG-secret-token-ü-✓';
    const first = crypto.encrypt(token, OWNER);
    const second = crypto.encrypt(token, OWNER);
    expect(first).not.toContain(token);
    expect(first).not.toEqual(second);
    expect(crypto.decrypt(first, OWNER)).toBe(token);
    expect(crypto.decrypt(second, OWNER)).toBe(token);
  });

  it('stores the format and key id with the value', () => {
    const parts = serviceWith(keyA).encrypt('x', OWNER).split(':');
    expect(parts).toHaveLength(5);
    expect(parts[0]).toBe('v2');
    expect(parts[1]).toMatch(/^[0-9a-f]{8}$/);
    expect(Buffer.from(parts[2], 'base64url')).toHaveLength(12);
    expect(Buffer.from(parts[3], 'base64url')).toHaveLength(16);
  });

  it('fails loudly on a tampered ciphertext, tag or IV', () => {
    const crypto = serviceWith(keyA);
    const parts = crypto.encrypt('the token', OWNER).split(':');
    for (const index of [2, 3, 4]) {
      const bytes = Buffer.from(parts[index], 'base64url');
      bytes[0] ^= 0x01;
      const tampered = [...parts];
      tampered[index] = bytes.toString('base64url');
      expect(() => crypto.decrypt(tampered.join(':'), OWNER)).toThrow(DecryptionError);
    }
    expect(() => crypto.decrypt('not-a-value', OWNER)).toThrow(DecryptionError);
  });

  it('refuses a value written with a key that is not configured', () => {
    const stored = serviceWith(keyA).encrypt('the token', OWNER);
    expect(() => serviceWith(keyB).decrypt(stored, OWNER)).toThrow(/not configured/);
  });

  it('fails authentication when the key id matches but the key differs', () => {
    const stored = serviceWith(keyA).encrypt('the token', OWNER);
    const otherKey = serviceWith(keyB).encrypt('x', OWNER).split(':')[1];
    const forged = stored.split(':');
    forged[1] = otherKey;
    expect(() => serviceWith(keyB).decrypt(forged.join(':'), OWNER)).toThrow(
      /authentication failed/,
    );
  });

  it('reads values of a previous key after rotation and flags them for re-encryption', () => {
    const old = serviceWith(keyA).encrypt('the token', OWNER);
    const rotated = serviceWith(keyB, [keyA]);
    expect(rotated.decrypt(old, OWNER)).toBe('the token');
    expect(rotated.needsReencryption(old)).toBe(true);
    expect(rotated.needsReencryption(rotated.encrypt('x', OWNER))).toBe(false);
  });

  it('binds a value to its owner: copied onto another, it does not decrypt', () => {
    const crypto = serviceWith(keyA);
    const stored = crypto.encrypt('the token', OWNER);
    expect(() => crypto.decrypt(stored, '8c1f0a5e-0000-4000-8000-000000000002')).toThrow(
      /another owner/,
    );
  });

  it('reads a value of the unbound v1 format, and flags it for re-encryption', () => {
    const crypto = serviceWith(keyA);
    const id = crypto.encrypt('x', OWNER).split(':')[1];
    // A v1 value: the same layout, encrypted without additional data.
    const ivBytes = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', Buffer.from(keyA, 'hex'), ivBytes);
    const ciphertext = Buffer.concat([cipher.update('old token', 'utf8'), cipher.final()]);
    const v1 = ['v1', id, ivBytes, cipher.getAuthTag(), ciphertext]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join(':');
    expect(crypto.decrypt(v1, OWNER)).toBe('old token');
    expect(crypto.needsReencryption(v1)).toBe(true);
  });
});
