import { randomBytes, randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { QueryFailedError, Repository } from 'typeorm';
import { AppException } from '../common/app.exception.js';
import { INSTANCE_TOPIC, REQUEST_PATH_CACHE_TTL_MS } from '../common/cache-topics.js';
import { LocalCache } from '../common/local-cache.js';
import { CryptoService } from '../crypto/crypto.service.js';
import { ALL_KEYS, CacheInvalidationService } from '../redis/cache-invalidation.service.js';
import { PlatformClient } from '../platform/platform-client.service.js';
import type { PhoneNumberDetails } from '../platform/platform.types.js';
import type { CreateInstanceDto } from './dto/create-instance.dto.js';
import type { UpdateInstanceDto } from './dto/update-instance.dto.js';
import { Instance } from './entities/instance.entity.js';

const UNIQUE_VIOLATION = '23505';

function isUniqueViolation(error: unknown): boolean {
  return (
    error instanceof QueryFailedError &&
    (error.driverError as { code?: string } | undefined)?.code === UNIQUE_VIOLATION
  );
}

function numberValues(details: PhoneNumberDetails): Partial<Instance> {
  return {
    display_phone_number: details.display_phone_number ?? null,
    verified_name: details.verified_name ?? null,
    quality_rating: details.quality_rating ?? null,
    messaging_limit_tier: details.messaging_limit_tier ?? null,
  };
}

@Injectable()
export class InstancesService implements OnApplicationBootstrap {
  private readonly logger = new Logger(InstancesService.name);
  private readonly byId = new LocalCache<Instance>(REQUEST_PATH_CACHE_TTL_MS);
  private readonly byPhoneNumberId = new LocalCache<Instance>(REQUEST_PATH_CACHE_TTL_MS);

  constructor(
    @InjectRepository(Instance) private readonly instances: Repository<Instance>,
    private readonly crypto: CryptoService,
    private readonly platform: PlatformClient,
    private readonly invalidation: CacheInvalidationService,
  ) {
    invalidation.on(INSTANCE_TOPIC, (id) => {
      this.byId.delete(id);
      // Keyed by number, not id: changes are rare, so drop them all.
      this.byPhoneNumberId.delete(ALL_KEYS);
    });
  }

  /** Checks the token with the platform (422/502 when it fails), then stores the instance. */
  async create(dto: CreateInstanceDto): Promise<Instance> {
    await this.assertNumberFree(dto.phone_number_id);
    const details = await this.platform.getPhoneNumber(dto.phone_number_id, dto.access_token);
    // The id is chosen here: the token is encrypted bound to it.
    const id = randomUUID();
    const instance = this.instances.create({
      id,
      name: dto.name,
      phone_number_id: dto.phone_number_id,
      channel_account_id: dto.channel_account_id,
      business_id: dto.business_id ?? null,
      platform_app_id: dto.platform_app_id ?? null,
      token_type: dto.token_type,
      access_token_encrypted: this.crypto.encrypt(dto.access_token, id),
      webhook_verify_token: randomBytes(24).toString('hex'),
      is_active: true,
      status: 'connected',
      ...numberValues(details),
    });
    try {
      const saved = await this.instances.save(instance);
      this.logger.log({ instanceId: saved.id }, 'instance created');
      return saved;
    } catch (error) {
      // Two creates for one number at once: the unique key decides.
      if (isUniqueViolation(error)) throw this.numberTaken(dto.phone_number_id);
      throw error;
    }
  }

  list(): Promise<Instance[]> {
    return this.instances.find({ order: { created_at: 'ASC' } });
  }

  /**
   * For request paths: served from the in-process cache, which every change
   * below invalidates in all processes. Treat the result as read-only.
   */
  async findById(id: string): Promise<Instance | null> {
    const cached = this.byId.get(id);
    if (cached) return cached;
    const [row] = await this.instances.query<Instance[]>('SELECT * FROM instances WHERE id = $1', [
      id,
    ]);
    if (row) this.byId.set(id, row);
    return row ?? null;
  }

  /** For the webhook workers: the instance a number's deliveries belong to (cached like findById). */
  async findByPhoneNumberId(phoneNumberId: string): Promise<Instance | null> {
    const cached = this.byPhoneNumberId.get(phoneNumberId);
    if (cached) return cached;
    const [row] = await this.instances.query<Instance[]>(
      'SELECT * FROM instances WHERE phone_number_id = $1',
      [phoneNumberId],
    );
    if (row) this.byPhoneNumberId.set(phoneNumberId, row);
    return row ?? null;
  }

  /** Whether a business account has an active instance (template events are kept only then). */
  async hasActiveInstanceFor(channelAccountId: string): Promise<boolean> {
    const found = await this.instances.query<unknown[]>(
      'SELECT 1 FROM instances WHERE channel_account_id = $1 AND is_active LIMIT 1',
      [channelAccountId],
    );
    return found.length > 0;
  }

  /** For admin changes: always read from the database. */
  async get(id: string): Promise<Instance> {
    const instance = await this.instances.findOneBy({ id });
    if (!instance) throw new AppException('instance_not_found', `Instance ${id} not found`);
    return instance;
  }

  async update(id: string, dto: UpdateInstanceDto): Promise<Instance> {
    const instance = await this.get(id);
    const changes: Partial<Instance> = {};
    if (dto.name !== undefined) changes.name = dto.name;
    if (dto.token_type !== undefined) changes.token_type = dto.token_type;
    if (dto.channel_account_id !== undefined) changes.channel_account_id = dto.channel_account_id;
    if (dto.business_id !== undefined) changes.business_id = dto.business_id;
    if (dto.platform_app_id !== undefined) changes.platform_app_id = dto.platform_app_id;
    if (dto.access_token !== undefined) {
      const details = await this.platform.getPhoneNumber(
        instance.phone_number_id,
        dto.access_token,
      );
      Object.assign(changes, numberValues(details), {
        access_token_encrypted: this.crypto.encrypt(dto.access_token, instance.id),
      });
    }
    if (Object.keys(changes).length === 0) {
      throw AppException.validation([{ field: 'body', message: 'names no field to change' }]);
    }
    Object.assign(instance, changes);
    return this.saveAndInvalidate(instance);
  }

  async remove(id: string): Promise<void> {
    // API keys (and later stored messages) go with it through ON DELETE CASCADE.
    const result = await this.instances.delete({ id });
    if (!result.affected) throw new AppException('instance_not_found', `Instance ${id} not found`);
    await this.invalidation.invalidate(INSTANCE_TOPIC, id);
    this.logger.log({ instanceId: id }, 'instance deleted');
  }

  /** Re-checks the token and refreshes the number's values; on refusal the instance stays as it was. */
  async activate(id: string): Promise<Instance> {
    const instance = await this.get(id);
    const details = await this.platform.getPhoneNumber(
      instance.phone_number_id,
      this.accessToken(instance),
    );
    Object.assign(instance, numberValues(details), { is_active: true, status: 'connected' });
    return this.saveAndInvalidate(instance);
  }

  async deactivate(id: string): Promise<Instance> {
    const instance = await this.get(id);
    Object.assign(instance, { is_active: false, status: 'disconnected' });
    return this.saveAndInvalidate(instance);
  }

  /** The decrypted platform token; keep it in memory only for the call that needs it. */
  accessToken(instance: Instance): string {
    return this.crypto.decrypt(instance.access_token_encrypted, instance.id);
  }

  /**
   * At boot, tokens written under an older key (or before they were bound to
   * their instance) are written again under the current key, so an old key
   * can be retired once every process has started with the new one.
   */
  async onApplicationBootstrap(): Promise<void> {
    let rows: Array<Pick<Instance, 'id' | 'access_token_encrypted'>>;
    try {
      rows = await this.instances.query('SELECT id, access_token_encrypted FROM instances');
    } catch (error) {
      this.logger.error(
        { err: (error as Error).message },
        'access tokens not re-encrypted at boot: the database is away',
      );
      return;
    }
    let updated = 0;
    for (const row of rows.filter((r) => this.crypto.needsReencryption(r.access_token_encrypted))) {
      try {
        const token = this.crypto.decrypt(row.access_token_encrypted, row.id);
        // Only if nobody changed it meanwhile (another process, a PATCH).
        const [, count] = await this.instances.query<[unknown[], number]>(
          `UPDATE instances SET access_token_encrypted = $3
           WHERE id = $1 AND access_token_encrypted = $2`,
          [row.id, row.access_token_encrypted, this.crypto.encrypt(token, row.id)],
        );
        updated += count;
      } catch (error) {
        // One unreadable token (its key gone, or tampered with) does not stop the others.
        this.logger.error(
          { instanceId: row.id, err: (error as Error).message },
          'access token could not be re-encrypted: update it with PATCH /admin/instances/{id}',
        );
      }
    }
    if (updated > 0) {
      await this.invalidation.invalidate(INSTANCE_TOPIC, ALL_KEYS);
      this.logger.log({ updated }, 'access tokens re-encrypted under the current key');
    }
  }

  private async saveAndInvalidate(instance: Instance): Promise<Instance> {
    const saved = await this.instances.save(instance);
    await this.invalidation.invalidate(INSTANCE_TOPIC, instance.id);
    return saved;
  }

  private async assertNumberFree(phoneNumberId: string): Promise<void> {
    if (await this.instances.existsBy({ phone_number_id: phoneNumberId })) {
      throw this.numberTaken(phoneNumberId);
    }
  }

  private numberTaken(phoneNumberId: string): AppException {
    return new AppException(
      'instance_exists',
      `An instance for phone_number_id ${phoneNumberId} already exists`,
    );
  }
}
