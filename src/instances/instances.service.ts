import { AppConfig } from '../config/app-config.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { AppException } from '../common/app.exception.js';
import { INSTANCE_TOPIC, REQUEST_PATH_CACHE_TTL_MS } from '../common/cache-topics.js';
import { LocalCache } from '../common/local-cache.js';
import { CryptoService } from '../crypto/crypto.service.js';
import { reencryptStale } from '../crypto/stale-secrets.js';
import { sqlState, UNIQUE_VIOLATION } from '../database/sql.js';
import { ALL_KEYS, CacheInvalidationService } from '../redis/cache-invalidation.service.js';
import { TargetGuard } from '../outbound/target-guard.js';
import { PlatformClient } from '../platform/platform-client.js';
import { PlatformSession } from '../platform/platform-session.js';
import type { PhoneNumberDetails } from '../platform/platform.types.js';
import type { CreateInstanceDto } from './dto/create-instance.dto.js';
import type { UpdateInstanceDto } from './dto/update-instance.dto.js';
import { InstanceStore, type InstanceChanges } from './instance.store.js';
import type { AgentSettings, Instance } from './instance.types.js';
import type { UpdateAgentSettingsDto } from './dto/agent-settings.dto.js';

function numberValues(details: PhoneNumberDetails): InstanceChanges {
  return {
    display_phone_number: details.display_phone_number ?? null,
    verified_name: details.verified_name ?? null,
    quality_rating: details.quality_rating ?? null,
    messaging_limit_tier: details.messaging_limit_tier ?? null,
  };
}

/** Instances: their lifecycle, the caches of the request path, and their platform sessions. */
@Injectable()
export class InstancesService implements OnApplicationBootstrap {
  private readonly logger = new Logger(InstancesService.name);
  private readonly byId = new LocalCache<Instance>(REQUEST_PATH_CACHE_TTL_MS);
  private readonly byPhoneNumberId = new LocalCache<Instance>(REQUEST_PATH_CACHE_TTL_MS);
  /**
   * Sessions by everything they are built from (a new token or number is a
   * new key): decrypting the token on every send cost more than the rest.
   */
  private readonly sessions = new LocalCache<PlatformSession>(REQUEST_PATH_CACHE_TTL_MS, 1000);

  constructor(
    private readonly instances: InstanceStore,
    private readonly crypto: CryptoService,
    private readonly platform: PlatformClient,
    private readonly invalidation: CacheInvalidationService,
    private readonly config: AppConfig,
    private readonly guard: TargetGuard,
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
    try {
      const saved = await this.instances.insert({
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
        display_phone_number: null,
        verified_name: null,
        quality_rating: null,
        messaging_limit_tier: null,
        ...numberValues(details),
      });
      this.logger.log({ instanceId: saved.id }, 'instance created');
      return saved;
    } catch (error) {
      // Two creates for one number at once: the unique key decides.
      if (sqlState(error) === UNIQUE_VIOLATION) throw this.numberTaken(dto.phone_number_id);
      throw error;
    }
  }

  list(): Promise<Instance[]> {
    return this.instances.list();
  }

  /**
   * For request paths: served from the in-process cache, which every change
   * below invalidates in all processes. Treat the result as read-only.
   */
  async findById(id: string): Promise<Instance | null> {
    const cached = this.byId.get(id);
    if (cached) return cached;
    const row = await this.instances.findById(id);
    if (row) this.byId.set(id, row);
    return row;
  }

  /** For the webhook workers: the instance a number's deliveries belong to (cached like findById). */
  async findByPhoneNumberId(phoneNumberId: string): Promise<Instance | null> {
    const cached = this.byPhoneNumberId.get(phoneNumberId);
    if (cached) return cached;
    const row = await this.instances.findByPhoneNumberId(phoneNumberId);
    if (row) this.byPhoneNumberId.set(phoneNumberId, row);
    return row;
  }

  /** Whether a business account has an active instance (template events are kept only then). */
  hasActiveInstanceFor(channelAccountId: string): Promise<boolean> {
    return this.instances.activeForAccount(channelAccountId);
  }

  /** Whether a token is some instance's webhook verify token. */
  isVerifyToken(token: string): Promise<boolean> {
    return this.instances.verifyTokenExists(token);
  }

  /** For admin changes: always read from the database. */
  async get(id: string): Promise<Instance> {
    const instance = await this.instances.findById(id);
    if (!instance) throw new AppException('instance_not_found', `Instance ${id} not found`);
    return instance;
  }

  async update(id: string, dto: UpdateInstanceDto): Promise<Instance> {
    const instance = await this.get(id);
    if (typeof dto.agent?.url === 'string') await this.assertAgentUrl(dto.agent.url);
    const changes: InstanceChanges = {};
    if (dto.name !== undefined) changes.name = dto.name;
    if (dto.token_type !== undefined) changes.token_type = dto.token_type;
    if (dto.channel_account_id !== undefined) changes.channel_account_id = dto.channel_account_id;
    if (dto.business_id !== undefined) changes.business_id = dto.business_id;
    if (dto.platform_app_id !== undefined) changes.platform_app_id = dto.platform_app_id;
    if (dto.marketing_messages !== undefined) changes.marketing_messages = dto.marketing_messages;
    if (dto.coexistence !== undefined) changes.coexistence = dto.coexistence;
    if (dto.access_token !== undefined) {
      const details = await this.sessionWith(instance, dto.access_token).phoneNumber();
      Object.assign(changes, numberValues(details), {
        access_token_encrypted: this.crypto.encrypt(dto.access_token, instance.id),
        token_rejected_at: null,
      });
    }
    if (dto.agent) Object.assign(changes, this.agentChanges(instance.id, dto.agent));
    if (Object.keys(changes).length === 0) {
      throw AppException.validation([{ field: 'body', message: 'names no field to change' }]);
    }
    return this.change(id, changes);
  }

  async remove(id: string): Promise<void> {
    // API keys (and later stored messages) go with it through ON DELETE CASCADE.
    if (!(await this.instances.delete(id)))
      throw new AppException('instance_not_found', `Instance ${id} not found`);
    await this.invalidation.invalidate(INSTANCE_TOPIC, id);
    this.logger.log({ instanceId: id }, 'instance deleted');
  }

  /** Re-checks the token and refreshes the number's values; on refusal the instance stays as it was. */
  async activate(id: string): Promise<Instance> {
    const instance = await this.get(id);
    const details = await this.session(instance).phoneNumber();
    return this.change(id, { ...numberValues(details), is_active: true, status: 'connected' });
  }

  async deactivate(id: string): Promise<Instance> {
    return this.change(id, { is_active: false, status: 'disconnected' });
  }

  /** Whether an instance's inbound messages go to an agent (its own, or the global one). */
  agentEnabled(instance: Instance): boolean {
    return (
      instance.agent_enabled && (instance.agent_url ?? this.config.AGENT_MODULE_URL) !== undefined
    );
  }

  /** An instance's buffer timing: its own, else MESSAGE_BUFFER_DELAY and MESSAGE_BUFFER_MAX_WAIT. */
  bufferTiming(instance: Instance | null): Pick<AgentSettings, 'delayMs' | 'maxWaitMs'> {
    return {
      delayMs: (instance?.agent_buffer_delay_s ?? this.config.MESSAGE_BUFFER_DELAY) * 1000,
      maxWaitMs: (instance?.agent_buffer_max_wait_s ?? this.config.MESSAGE_BUFFER_MAX_WAIT) * 1000,
    };
  }

  /** The agent settings of an instance: its own, else the global ones. */
  agentSettings(instance: Instance): AgentSettings {
    const url = instance.agent_url ?? this.config.AGENT_MODULE_URL;
    return {
      enabled: this.agentEnabled(instance),
      url,
      // An admin's URL is guarded on every call; AGENT_MODULE_URL comes from the environment.
      guarded: instance.agent_url !== null,
      // The global token goes only to the global agent, never to an instance's own URL.
      token: instance.agent_token_encrypted
        ? this.crypto.decrypt(instance.agent_token_encrypted, instance.id)
        : instance.agent_url === null
          ? this.config.AGENT_MODULE_TOKEN
          : undefined,
      ...this.bufferTiming(instance),
      typing: instance.agent_typing_indicator ?? this.config.AGENT_TYPING_INDICATOR,
    };
  }

  /** 400 naming agent.url unless the URL may be called (TargetGuard, as for event targets). */
  private async assertAgentUrl(url: string): Promise<void> {
    const why = await this.guard.urlRefusal(url);
    if (why) throw AppException.validation([{ field: 'agent.url', message: `is refused: ${why}` }]);
  }

  private agentChanges(id: string, agent: UpdateAgentSettingsDto): InstanceChanges {
    const changes: InstanceChanges = {};
    if (agent.enabled !== undefined) changes.agent_enabled = agent.enabled;
    if (agent.url !== undefined) changes.agent_url = agent.url;
    if (agent.token !== undefined) {
      changes.agent_token_encrypted =
        agent.token === null ? null : this.crypto.encrypt(agent.token, id);
    }
    if (agent.buffer_delay_s !== undefined) changes.agent_buffer_delay_s = agent.buffer_delay_s;
    if (agent.buffer_max_wait_s !== undefined)
      changes.agent_buffer_max_wait_s = agent.buffer_max_wait_s;
    if (agent.typing_indicator !== undefined)
      changes.agent_typing_indicator = agent.typing_indicator;
    return changes;
  }

  /** The platform calls of the instance's number, with its token decrypted once. */
  session(instance: Instance): PlatformSession {
    const key = [
      instance.id,
      instance.phone_number_id,
      instance.channel_account_id,
      instance.access_token_encrypted,
    ].join(' ');
    let session = this.sessions.get(key);
    if (!session) {
      session = this.sessionWith(
        instance,
        this.crypto.decrypt(instance.access_token_encrypted, instance.id),
        () => void this.markTokenRejected(instance.id),
      );
      this.sessions.set(key, session);
    }
    return session;
  }

  private sessionWith(
    instance: Instance,
    token: string,
    onTokenRejected?: () => void,
  ): PlatformSession {
    return new PlatformSession(
      this.platform,
      {
        phoneNumberId: instance.phone_number_id,
        channelAccountId: instance.channel_account_id,
        token,
      },
      onTokenRejected,
    );
  }

  /**
   * The platform refused the stored token (code 190) on some call: the
   * instance is marked (an instance.status event tells subscribers), so an
   * admin learns before customers do.
   */
  private async markTokenRejected(id: string): Promise<void> {
    try {
      if (!(await this.instances.markTokenRejected(id))) return;
      this.logger.warn(
        { instanceId: id },
        'the platform refused the access token: update it with PATCH /admin/instances/{id}',
      );
      await this.invalidation.invalidate(INSTANCE_TOPIC, id);
    } catch (error) {
      this.logger.warn(
        { instanceId: id, err: (error as Error).message },
        'token refusal not recorded',
      );
    }
  }

  /**
   * At boot, tokens (platform and agent) written under an older key (or
   * before they were bound to their instance) are written again under the
   * current key, so an old key can be retired once every process has started
   * with the new one.
   */
  async onApplicationBootstrap(): Promise<void> {
    const updated = await reencryptStale(
      this.crypto,
      {
        what: 'instance tokens',
        remedy: 'set it again with PATCH /admin/instances/{id}',
        read: () => this.instances.secrets(),
        replace: (secret, next) => this.instances.replaceSecret(secret, next),
      },
      this.logger,
    );
    if (updated > 0) await this.invalidation.invalidate(INSTANCE_TOPIC, ALL_KEYS);
  }

  /**
   * The platform upgraded a number's throughput (its webhook names only the
   * display number): its sends are paced to `rate` from now on, everywhere.
   * The instances changed.
   */
  async raiseThroughput(displayPhoneNumber: string, rate: number): Promise<Instance[]> {
    const digits = displayPhoneNumber.replace(/\D/g, '');
    if (!digits) return [];
    const changed = await this.instances.setSendRateByDisplayNumber(digits, rate);
    for (const instance of changed) await this.invalidation.invalidate(INSTANCE_TOPIC, instance.id);
    return changed;
  }

  /** The number is shared with the phone app (paced at 20 a second from now on). */
  async markCoexistence(phoneNumberId: string): Promise<Instance | null> {
    const changed = await this.instances.markCoexistence(phoneNumberId);
    if (changed) await this.invalidation.invalidate(INSTANCE_TOPIC, changed.id);
    return changed;
  }

  /** The business's daily limit on new customers, on every instance of its account. */
  async setDailyLimit(channelAccountId: string, limit: number | null): Promise<Instance[]> {
    const changed = await this.instances.setDailyLimit(channelAccountId, limit);
    for (const instance of changed) await this.invalidation.invalidate(INSTANCE_TOPIC, instance.id);
    return changed;
  }

  private async change(id: string, changes: InstanceChanges): Promise<Instance> {
    const saved = await this.instances.update(id, changes);
    if (!saved) throw new AppException('instance_not_found', `Instance ${id} not found`);
    await this.invalidation.invalidate(INSTANCE_TOPIC, id);
    return saved;
  }

  private async assertNumberFree(phoneNumberId: string): Promise<void> {
    if (await this.instances.numberTaken(phoneNumberId)) {
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
