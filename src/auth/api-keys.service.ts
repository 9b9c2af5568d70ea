import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppException } from '../common/app.exception.js';
import { LocalCache } from '../common/local-cache.js';
import {
  API_KEY_TOPIC,
  INSTANCE_TOPIC,
  REQUEST_PATH_CACHE_TTL_MS,
} from '../common/cache-topics.js';
import { ALL_KEYS, CacheInvalidationService } from '../redis/cache-invalidation.service.js';
import { AppConfig } from '../config/app-config.js';
import { ApiKeyStore } from './api-key.store.js';
import type { ApiKey } from './api-key.types.js';

const KEY_PREFIX = 'mck_';
const PREFIX_LENGTH = 12;
/** last_used_at is a hint for admins: written at most this often per key and process. */
const LAST_USED_WRITE_INTERVAL_MS = 60_000;

export interface ApiKeyPrincipal {
  /** null for the global API_KEY. */
  apiKeyId: string | null;
  /** Set when the key is bound to one instance. */
  boundInstanceId: string | null;
}

export interface CreatedApiKey {
  record: ApiKey;
  key: string;
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

@Injectable()
export class ApiKeysService {
  private readonly globalKeyHash: Buffer | null;
  private readonly lastUsedWrites = new Map<string, number>();
  /** Known keys by hash (never unknown ones: guesses must not fill memory). */
  private readonly principals = new LocalCache<ApiKeyPrincipal>(REQUEST_PATH_CACHE_TTL_MS);

  constructor(
    private readonly keys: ApiKeyStore,
    private readonly invalidation: CacheInvalidationService,
    config: AppConfig,
  ) {
    this.globalKeyHash = config.API_KEY ? sha256(config.API_KEY) : null;
    invalidation.on(API_KEY_TOPIC, (hash) => this.principals.delete(hash));
    // Deleting an instance deletes its keys: forget them all, it is rare.
    invalidation.on(INSTANCE_TOPIC, () => this.principals.delete(ALL_KEYS));
  }

  async create(name: string, instanceId: string | null): Promise<CreatedApiKey> {
    const key = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
    const record = await this.keys.insert({
      name,
      instance_id: instanceId,
      key_hash: sha256(key).toString('hex'),
      prefix: key.slice(0, PREFIX_LENGTH),
    });
    return { record, key };
  }

  list(): Promise<ApiKey[]> {
    return this.keys.list();
  }

  async remove(id: string): Promise<void> {
    const hash = await this.keys.delete(id);
    if (hash === null) throw new AppException('api_key_not_found', `API key ${id} not found`);
    // Every process forgets it now: the key stops working at once.
    await this.invalidation.invalidate(API_KEY_TOPIC, hash);
  }

  /** Finds who a presented key belongs to; throws 401 when it is unknown or revoked. */
  async authenticate(presented: string): Promise<ApiKeyPrincipal> {
    const hash = sha256(presented);
    if (this.globalKeyHash && timingSafeEqual(hash, this.globalKeyHash)) {
      return { apiKeyId: null, boundInstanceId: null };
    }
    // The lookup is by hash: timing reveals nothing about any stored key.
    const hex = hash.toString('hex');
    const cached = this.principals.get(hex);
    if (cached) {
      if (cached.apiKeyId) this.touch(cached.apiKeyId);
      return cached;
    }
    const found = await this.keys.findByHash(hex);
    if (!found || !timingSafeEqual(Buffer.from(found.key_hash, 'hex'), hash)) {
      throw new AppException('unauthorized', 'Unknown or revoked API key');
    }
    this.touch(found.id);
    const principal = { apiKeyId: found.id, boundInstanceId: found.instance_id };
    this.principals.set(hex, principal);
    return principal;
  }

  private touch(id: string): void {
    const now = Date.now();
    if (now - (this.lastUsedWrites.get(id) ?? 0) < LAST_USED_WRITE_INTERVAL_MS) return;
    this.lastUsedWrites.set(id, now);
    void this.keys.touch(id, new Date(now)).catch(() => undefined);
  }
}
