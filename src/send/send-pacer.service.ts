import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { AppConfig } from '../config/app-config.js';
import { PlatformError } from '../platform/platform.errors.js';
import { REDIS_CLIENT } from '../redis/redis.constants.js';

/** A send waits at most this long for its turn; beyond it the client gets 429 at once. */
export const MAX_PACING_WAIT_MS = 5000;

/** Codes after which a number (or one of its recipients) is left alone for a while. */
const NUMBER_THROTTLED_CODE = 130429;
const PAIR_THROTTLED_CODE = 131056;

/**
 * GCRA over one key per number, in Redis so every process shares it.
 * Returns {0, wait ms} when a slot is reserved, {1, ms} when the number or
 * the pair is throttled, {2, ms} when the queue is longer than the max wait.
 */
const ACQUIRE_SCRIPT = `
local blocked = math.max(redis.call('PTTL', KEYS[2]), redis.call('PTTL', KEYS[3]))
if blocked > 0 then return {1, blocked} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local wait = tat - now
if wait > tonumber(ARGV[2]) * 1000 then return {2, math.ceil(wait / 1000)} end
local nextTat = tat + tonumber(ARGV[1])
redis.call('SET', KEYS[1], string.format('%d', nextTat), 'PX', math.ceil((nextTat - now) / 1000) + 1000)
return {0, math.floor(wait / 1000)}
`;

type Acquired = [state: 0 | 1 | 2, ms: number];

type PacingRedis = Redis & {
  acquireSendSlot(
    paceKey: string,
    numberThrottleKey: string,
    pairThrottleKey: string,
    intervalMicros: number,
    maxWaitMs: number,
  ): Promise<Acquired>;
};

/**
 * Paces sends per phone number to PLATFORM_SEND_RATE across all processes, so
 * bursts queue briefly instead of drawing throttling errors, and keeps away
 * from a number (or recipient) the platform said is throttled.
 */
@Injectable()
export class SendPacer {
  private readonly logger = new Logger(SendPacer.name);
  private readonly intervalMicros: number;
  private lastRedisWarning = 0;

  constructor(
    @Inject(REDIS_CLIENT) private readonly redis: PacingRedis,
    private readonly config: AppConfig,
  ) {
    // Sent by SHA (EVALSHA) after the first call.
    if (typeof (redis as Partial<PacingRedis>).acquireSendSlot !== 'function') {
      redis.defineCommand('acquireSendSlot', { numberOfKeys: 3, lua: ACQUIRE_SCRIPT });
    }
    this.intervalMicros = Math.max(1, Math.round(1_000_000 / config.PLATFORM_SEND_RATE));
  }

  /** Runs `send` when the number's turn comes; remembers throttling the platform reports. */
  async run<T>(phoneNumberId: string, recipient: string, send: () => Promise<T>): Promise<T> {
    await this.waitForTurn(phoneNumberId, recipient);
    try {
      return await send();
    } catch (error) {
      if (error instanceof PlatformError)
        await this.rememberThrottling(error, phoneNumberId, recipient);
      throw error;
    }
  }

  private async waitForTurn(phoneNumberId: string, recipient: string): Promise<void> {
    const deadline = Date.now() + MAX_PACING_WAIT_MS;
    for (;;) {
      const acquired = await this.acquire(phoneNumberId, recipient);
      if (!acquired) return;
      const [state, ms] = acquired;
      if (state === 0) {
        if (ms > 0) await sleep(ms);
        return;
      }
      if (Date.now() + ms > deadline) throw this.rateLimited(ms);
      await sleep(ms);
    }
  }

  /** null when Redis cannot be asked: sends go on unpaced rather than stop. */
  private async acquire(phoneNumberId: string, recipient: string): Promise<Acquired | null> {
    try {
      return await this.redis.acquireSendSlot(
        this.key('pace', phoneNumberId),
        this.key('throttled', phoneNumberId),
        this.key('throttled', phoneNumberId, recipient),
        this.intervalMicros,
        MAX_PACING_WAIT_MS,
      );
    } catch {
      if (Date.now() - this.lastRedisWarning > 10_000) {
        this.lastRedisWarning = Date.now();
        this.logger.warn('Redis unavailable: sends are not paced');
      }
      return null;
    }
  }

  private async rememberThrottling(
    error: PlatformError,
    phoneNumberId: string,
    recipient: string,
  ): Promise<void> {
    const { platformCode, retryAfterSeconds } = error.failure;
    if (platformCode !== NUMBER_THROTTLED_CODE && platformCode !== PAIR_THROTTLED_CODE) return;
    const key =
      platformCode === NUMBER_THROTTLED_CODE
        ? this.key('throttled', phoneNumberId)
        : this.key('throttled', phoneNumberId, recipient);
    const seconds = Math.max(1, retryAfterSeconds ?? 60);
    await this.redis.set(key, '1', 'EX', seconds).catch(() => undefined);
  }

  private rateLimited(waitMs: number): PlatformError {
    return new PlatformError({
      kind: 'rate_limited',
      platformMessage: 'sends to this number are queued beyond the pacing limit',
      retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
    });
  }

  private key(...parts: string[]): string {
    return [this.config.REDIS_PREFIX, 'send', ...parts].join(':');
  }
}
