import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createSecretKey,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig, decodeEncryptionKey } from '../config/app-config.js';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** v2 binds the value to its owner (additional authenticated data); v1 did not. */
const FORMAT = 'v2';
const FORMATS = new Set(['v1', 'v2']);

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
 * `v2:<key id>:<iv>:<tag>:<ciphertext>` (base64url parts): the key id picks
 * the key to decrypt with, so older keys can stay readable after a rotation,
 * and the value is bound to its owner (`boundTo`, e.g. the instance id, as
 * additional authenticated data): copied onto another row it does not decrypt.
 * Values of the older format `v1` (no binding) are still read.
 */
@Injectable()
export class CryptoService {
  private readonly currentKeyId: string;
  /** As key objects: a cipher made from raw key bytes costs several times the decryption. */
  private readonly keys = new Map<string, KeyObject>();

  constructor(config: AppConfig) {
    const current = decodeEncryptionKey(config.ENCRYPTION_KEY);
    if (!current) throw new Error('ENCRYPTION_KEY must be 32 bytes as 64 hex characters or base64');
    this.currentKeyId = keyId(current);
    this.keys.set(this.currentKeyId, createSecretKey(current));
    for (const encoded of config.ENCRYPTION_PREVIOUS_KEYS) {
      const key = decodeEncryptionKey(encoded);
      if (key) this.keys.set(keyId(key), createSecretKey(key));
    }
  }

  encrypt(plaintext: string, boundTo: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.keys.get(this.currentKeyId)!, iv);
    cipher.setAAD(Buffer.from(boundTo, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [FORMAT, this.currentKeyId, iv, tag, ciphertext]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join(':');
  }

  /**
   * Throws DecryptionError when the value was tampered with, belongs to
   * another owner, or its key is not configured.
   */
  decrypt(stored: string, boundTo: string): string {
    const parts = stored.split(':');
    if (parts.length !== 5 || !FORMATS.has(parts[0])) throw new DecryptionError('unknown format');
    const [format, id, ivPart, tagPart, dataPart] = parts;
    const key = this.keys.get(id);
    if (!key) throw new DecryptionError(`key ${id} is not configured`);
    const iv = Buffer.from(ivPart, 'base64url');
    const tag = Buffer.from(tagPart, 'base64url');
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
      throw new DecryptionError('malformed value');
    }
    try {
      const decipher = createDecipheriv(ALGORITHM, key, iv);
      if (format === FORMAT) decipher.setAAD(Buffer.from(boundTo, 'utf8'));
      decipher.setAuthTag(tag);
      return Buffer.concat([
        decipher.update(Buffer.from(dataPart, 'base64url')),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new DecryptionError(
        'authentication failed (tampered value, another owner, or wrong key)',
      );
    }
  }

  /** Whether a stored value was written with an older key or format and should be re-encrypted. */
  needsReencryption(stored: string): boolean {
    const [format, id] = stored.split(':');
    return format !== FORMAT || id !== this.currentKeyId;
  }
}
