import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig, decodeEncryptionKey } from '../config/app-config.js';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const FORMAT = 'v1';

export class DecryptionError extends Error {
  constructor(reason: string) {
    super(`Cannot decrypt value: ${reason}`);
    this.name = 'DecryptionError';
  }
}

/** A short public id of a key (not the key): stored with each value so keys can rotate. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/**
 * AES-256-GCM for secrets at rest. A value is stored as
 * `v1:<key id>:<iv>:<tag>:<ciphertext>` (base64url parts): the key id picks
 * the key to decrypt with, so older keys can stay readable after a rotation.
 */
@Injectable()
export class CryptoService {
  private readonly currentKeyId: string;
  private readonly keys = new Map<string, Buffer>();

  constructor(config: AppConfig) {
    const current = decodeEncryptionKey(config.ENCRYPTION_KEY);
    if (!current) throw new Error('ENCRYPTION_KEY must be 32 bytes as 64 hex characters or base64');
    this.currentKeyId = keyId(current);
    this.keys.set(this.currentKeyId, current);
    for (const encoded of config.ENCRYPTION_PREVIOUS_KEYS) {
      const key = decodeEncryptionKey(encoded);
      if (key) this.keys.set(keyId(key), key);
    }
  }

  encrypt(plaintext: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.keys.get(this.currentKeyId)!, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [FORMAT, this.currentKeyId, iv, tag, ciphertext]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join(':');
  }

  /** Throws DecryptionError when the value was tampered with or its key is not configured. */
  decrypt(stored: string): string {
    const parts = stored.split(':');
    if (parts.length !== 5 || parts[0] !== FORMAT) throw new DecryptionError('unknown format');
    const [, id, ivPart, tagPart, dataPart] = parts;
    const key = this.keys.get(id);
    if (!key) throw new DecryptionError(`key ${id} is not configured`);
    const iv = Buffer.from(ivPart, 'base64url');
    const tag = Buffer.from(tagPart, 'base64url');
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
      throw new DecryptionError('malformed value');
    }
    try {
      const decipher = createDecipheriv(ALGORITHM, key, iv);
      decipher.setAuthTag(tag);
      return Buffer.concat([
        decipher.update(Buffer.from(dataPart, 'base64url')),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new DecryptionError('authentication failed (tampered value or wrong key)');
    }
  }

  /** Whether a stored value was written with an older key and should be re-encrypted. */
  needsReencryption(stored: string): boolean {
    return stored.split(':')[1] !== this.currentKeyId;
  }
}
