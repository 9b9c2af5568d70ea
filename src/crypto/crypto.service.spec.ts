import { randomBytes } from 'node:crypto';
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

const keyA = randomBytes(32).toString('hex');
const keyB = randomBytes(32).toString('base64');

describe('CryptoService', () => {
  it('round-trips a value, with a fresh IV each time', () => {
    const crypto = serviceWith(keyA);
    const token = 'EAAG-secret-token-ü-✓';
    const first = crypto.encrypt(token);
    const second = crypto.encrypt(token);
    expect(first).not.toContain(token);
    expect(first).not.toEqual(second);
    expect(crypto.decrypt(first)).toBe(token);
    expect(crypto.decrypt(second)).toBe(token);
  });

  it('stores the format and key id with the value', () => {
    const parts = serviceWith(keyA).encrypt('x').split(':');
    expect(parts).toHaveLength(5);
    expect(parts[0]).toBe('v1');
    expect(parts[1]).toMatch(/^[0-9a-f]{8}$/);
    expect(Buffer.from(parts[2], 'base64url')).toHaveLength(12);
    expect(Buffer.from(parts[3], 'base64url')).toHaveLength(16);
  });

  it('fails loudly on a tampered ciphertext, tag or IV', () => {
    const crypto = serviceWith(keyA);
    const parts = crypto.encrypt('the token').split(':');
    for (const index of [2, 3, 4]) {
      const bytes = Buffer.from(parts[index], 'base64url');
      bytes[0] ^= 0x01;
      const tampered = [...parts];
      tampered[index] = bytes.toString('base64url');
      expect(() => crypto.decrypt(tampered.join(':'))).toThrow(DecryptionError);
    }
    expect(() => crypto.decrypt('not-a-value')).toThrow(DecryptionError);
  });

  it('refuses a value written with a key that is not configured', () => {
    const stored = serviceWith(keyA).encrypt('the token');
    expect(() => serviceWith(keyB).decrypt(stored)).toThrow(/not configured/);
  });

  it('fails authentication when the key id matches but the key differs', () => {
    const stored = serviceWith(keyA).encrypt('the token');
    const otherKey = serviceWith(keyB).encrypt('x').split(':')[1];
    const forged = stored.split(':');
    forged[1] = otherKey;
    expect(() => serviceWith(keyB).decrypt(forged.join(':'))).toThrow(/authentication failed/);
  });

  it('reads values of a previous key after rotation and flags them for re-encryption', () => {
    const old = serviceWith(keyA).encrypt('the token');
    const rotated = serviceWith(keyB, [keyA]);
    expect(rotated.decrypt(old)).toBe('the token');
    expect(rotated.needsReencryption(old)).toBe(true);
    expect(rotated.needsReencryption(rotated.encrypt('x'))).toBe(false);
  });
});
