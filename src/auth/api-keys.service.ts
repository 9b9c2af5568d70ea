import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppException } from '../common/app.exception.js';
import { AppConfig } from '../config/app-config.js';
import { ApiKey } from './entities/api-key.entity.js';

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

  constructor(
    @InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>,
    config: AppConfig,
  ) {
    this.globalKeyHash = config.API_KEY ? sha256(config.API_KEY) : null;
  }

  async create(name: string, instanceId: string | null): Promise<CreatedApiKey> {
    const key = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
    const record = await this.keys.save(
      this.keys.create({
        name,
        instance_id: instanceId,
        key_hash: sha256(key).toString('hex'),
        prefix: key.slice(0, PREFIX_LENGTH),
        last_used_at: null,
      }),
    );
    return { record, key };
  }

  list(): Promise<ApiKey[]> {
    return this.keys.find({ order: { created_at: 'ASC' } });
  }

  async remove(id: string): Promise<void> {
    const result = await this.keys.delete({ id });
    if (!result.affected) throw new AppException('api_key_not_found', `API key ${id} not found`);
  }

  /** Finds who a presented key belongs to; throws 401 when it is unknown or revoked. */
  async authenticate(presented: string): Promise<ApiKeyPrincipal> {
    const hash = sha256(presented);
    if (this.globalKeyHash && timingSafeEqual(hash, this.globalKeyHash)) {
      return { apiKeyId: null, boundInstanceId: null };
    }
    // The lookup is by hash: timing reveals nothing about any stored key.
    const hex = hash.toString('hex');
    const found = await this.keys.findOne({
      where: { key_hash: hex },
      select: { id: true, instance_id: true, key_hash: true },
    });
    if (!found || !timingSafeEqual(Buffer.from(found.key_hash, 'hex'), hash)) {
      throw new AppException('unauthorized', 'Unknown or revoked API key');
    }
    this.touch(found.id);
    return { apiKeyId: found.id, boundInstanceId: found.instance_id };
  }

  private touch(id: string): void {
    const now = Date.now();
    if (now - (this.lastUsedWrites.get(id) ?? 0) < LAST_USED_WRITE_INTERVAL_MS) return;
    this.lastUsedWrites.set(id, now);
    void this.keys.update({ id }, { last_used_at: new Date(now) }).catch(() => undefined);
  }
}
