import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { AppConfig } from '../config/app-config.js';
import { PlatformError } from '../platform/platform.errors.js';
import { REDIS_CLIENT } from '../redis/redis.constants.js';

/** A send waits at most this long for its turn; beyond it the client gets 429 with the real wait. */
export const MAX_PACING_WAIT_MS = 5000;

/** The platform's codes for "this number is sending too fast" and "too many to this user". */
const NUMBER_THROTTLED_CODE = 130429;
const PAIR_THROTTLED_CODE = 131056;

/**
 * After throttling without a Retry-After, a number pauses 2 s, then 4, 8… up
 * to 60 s while throttling repeats (strikes are forgotten after 5 quiet minutes).
 */
const FIRST_PAUSE_MS = 2000;
const MAX_PAUSE_MS = 60_000;
const STRIKES_TTL_S = 300;

/** Each throttling halves the number's rate (to a tenth at least); it recovers by half a rate per 30 s. */
const RATE_CUT = 0.5;
const MIN_RATE_FACTOR = 0.1;
const RECOVERY_PER_MS = 0.5 / 30_000;

/**
 * After 131056, sends to that user are spaced this far apart, for 10 minutes;
 * a send may wait a little over one interval for its turn rather than be refused.
 */
const PAIR_INTERVAL_MS = 6000;
const PAIR_MAX_WAIT_MS = 7000;
const PAIR_SLOW_TTL_S = 600;

/**
 * How every turn begins: a paused number (KEYS[2]) answers {1, ms}; else
 * `now` (µs, Redis's clock) and the number's rate `factor` (KEYS[3]),
 * recovering by the ARGV named `recovery` per ms since its last cut.
 */
const turnStart = (recovery: string) => `
local paused = redis.call('PTTL', KEYS[2])
if paused > 0 then return {1, paused} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local factor = 1
local rate = redis.call('HMGET', KEYS[3], 'f', 't')
if rate[1] then
  factor = math.min(1, tonumber(rate[1]) + (now - tonumber(rate[2])) / 1000 * tonumber(${recovery}))
end
`;

/**
 * One send's turn, over keys shared by every process:
 * KEYS: pace (number GCRA), pause (number paused), rate (factor, since),
 *       pair-slow (user spaced), pair-pace (user GCRA).
 * ARGV: interval µs at full rate, max wait ms, recovery per ms, pair interval µs,
 *       max wait for a spaced user ms.
 * Returns {0, wait ms} when a slot is reserved, {1, ms} while the number is
 * paused, {2, ms} when the wait would be longer than allowed.
 */
const ACQUIRE_SCRIPT = `${turnStart('ARGV[3]')}local interval = tonumber(ARGV[1]) / factor
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local wait = tat - now
if wait > tonumber(ARGV[2]) * 1000 then return {2, math.ceil(wait / 1000)} end
local pairTat = nil
if redis.call('EXISTS', KEYS[4]) == 1 then
  pairTat = tonumber(redis.call('GET', KEYS[5]) or '0')
  if pairTat < now then pairTat = now end
  if pairTat - now > tonumber(ARGV[5]) * 1000 then return {2, math.ceil((pairTat - now) / 1000)} end
  wait = math.max(wait, pairTat - now)
end
local nextTat = tat + interval
redis.call('SET', KEYS[1], string.format('%d', nextTat), 'PX', math.ceil((nextTat - now) / 1000) + 1000)
if pairTat then
  local nextPair = math.max(pairTat, now + wait) + tonumber(ARGV[4])
  redis.call('SET', KEYS[5], string.format('%d', nextPair), 'PX', math.ceil((nextPair - now) / 1000) + 1000)
end
return {0, math.floor(wait / 1000)}
`;

/**
 * The number was throttled (130429): pause it for the platform's Retry-After,
 * or for a pause that doubles with each strike, and cut its rate.
 * KEYS: pause, strikes, rate. ARGV: retry-after ms (0: none), first pause ms,
 * max pause ms, strikes ttl s, rate cut, min factor, recovery per ms.
 * Returns the pause in ms.
 */
const NUMBER_THROTTLED_SCRIPT = `
local strikes = redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[4])
local pause = tonumber(ARGV[1])
if pause <= 0 then
  pause = math.min(tonumber(ARGV[3]), tonumber(ARGV[2]) * 2 ^ (strikes - 1))
end
redis.call('SET', KEYS[1], '1', 'PX', math.ceil(pause))
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local factor = 1
local rate = redis.call('HMGET', KEYS[3], 'f', 't')
if rate[1] then
  factor = math.min(1, tonumber(rate[1]) + (now - tonumber(rate[2])) / 1000 * tonumber(ARGV[7]))
end
factor = math.max(tonumber(ARGV[6]), factor * tonumber(ARGV[5]))
redis.call('HSET', KEYS[3], 'f', tostring(factor), 't', string.format('%d', now))
redis.call('EXPIRE', KEYS[3], 3600)
return math.ceil(pause)
`;

/**
 * Too many messages to one user (131056): from now on that user's sends are
 * spaced. KEYS: pair-slow, pair-pace. ARGV: pair interval µs, slow ttl s.
 * Returns the wait before the next send to the user may go, in ms.
 */
const PAIR_THROTTLED_SCRIPT = `
redis.call('SET', KEYS[1], '1', 'EX', ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local nextPair = now + tonumber(ARGV[1])
redis.call('SET', KEYS[2], string.format('%d', nextPair), 'PX', math.ceil(tonumber(ARGV[1]) / 1000) + 1000)
return math.ceil(tonumber(ARGV[1]) / 1000)
`;

/**
 * A campaign's turn: a slot only when the number has one free now (sends
 * that wait are conversations', and they go first) and the campaign's own
 * rate allows. KEYS: pace, pause, rate, campaign pace. ARGV: the number's
 * interval µs at full rate, recovery per ms, the campaign's interval µs (0:
 * none). Returns {0, 0} with the slot taken, {1, ms} while the number is
 * paused, {2, ms} to wait before asking again.
 */
const CAMPAIGN_SCRIPT = `${turnStart('ARGV[2]')}local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat > now then return {2, math.ceil((tat - now) / 1000)} end
local own = tonumber(ARGV[3])
if own > 0 then
  local ctat = tonumber(redis.call('GET', KEYS[4]) or '0')
  if ctat > now then return {2, math.ceil((ctat - now) / 1000)} end
  redis.call('SET', KEYS[4], string.format('%d', now + own), 'PX', math.ceil(own / 1000) + 1000)
end
local interval = tonumber(ARGV[1]) / factor
redis.call('SET', KEYS[1], string.format('%d', now + interval), 'PX', math.ceil(interval / 1000) + 1000)
return {0, 0}
`;

type Acquired = [state: 0 | 1 | 2, ms: number];

type PacingRedis = Redis & {
  acquireSendSlot(
    pace: string,
    pause: string,
    rate: string,
    pairSlow: string,
    pairPace: string,
    intervalMicros: number,
    maxWaitMs: number,
    recoveryPerMs: number,
    pairIntervalMicros: number,
    pairMaxWaitMs: number,
  ): Promise<Acquired>;
  numberThrottled(
    pause: string,
    strikes: string,
    rate: string,
    retryAfterMs: number,
    firstPauseMs: number,
    maxPauseMs: number,
    strikesTtlS: number,
    rateCut: number,
    minFactor: number,
    recoveryPerMs: number,
  ): Promise<number>;
  campaignSlot(
    pace: string,
    pause: string,
    rate: string,
    campaignPace: string,
    intervalMicros: number,
    recoveryPerMs: number,
    campaignIntervalMicros: number,
  ): Promise<Acquired>;
  pairThrottled(
    pairSlow: string,
    pairPace: string,
    intervalMicros: number,
    ttlS: number,
  ): Promise<number>;
};

/**
 * Paces sends per phone number to PLATFORM_SEND_RATE across all processes, so
 * bursts queue briefly instead of drawing throttling errors, and adapts when
 * the platform throttles anyway: a number is paused for its Retry-After (or
 * briefly, longer only as throttling repeats) and slowed, recovering
 * gradually; a user the platform says gets too much is written to more
 * slowly rather than refused. A 429's Retry-After is the real wait.
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
      redis.defineCommand('acquireSendSlot', { numberOfKeys: 5, lua: ACQUIRE_SCRIPT });
      redis.defineCommand('numberThrottled', { numberOfKeys: 3, lua: NUMBER_THROTTLED_SCRIPT });
      redis.defineCommand('pairThrottled', { numberOfKeys: 2, lua: PAIR_THROTTLED_SCRIPT });
      redis.defineCommand('campaignSlot', { numberOfKeys: 4, lua: CAMPAIGN_SCRIPT });
    }
    this.intervalMicros = Math.max(1, Math.round(1_000_000 / config.PLATFORM_SEND_RATE));
    this.defaultRate = config.PLATFORM_SEND_RATE;
  }

  /** PLATFORM_SEND_RATE: a number's rate when it has none of its own. */
  readonly defaultRate: number;

  /**
   * Runs `send` when the number's (and the recipient's) turn comes; adapts to
   * throttling. `send` is told whether it waited for its turn (what it read
   * before may have changed meanwhile).
   */
  async run<T>(
    phoneNumberId: string,
    recipient: string,
    send: (waited: boolean) => Promise<T>,
    /** The number's own rate (after the platform's throughput upgrade); null: PLATFORM_SEND_RATE. */
    numberRate: number | null = null,
  ): Promise<T> {
    const waited = await this.waitForTurn(phoneNumberId, recipient, this.interval(numberRate));
    try {
      return await send(waited);
    } catch (error) {
      if (error instanceof PlatformError) {
        const waitMs = await this.rememberThrottling(error, phoneNumberId, recipient);
        // The platform's code and trace stay; the Retry-After is the wait now in force.
        if (waitMs !== null) {
          throw new PlatformError({
            ...error.failure,
            kind: 'rate_limited',
            retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
          });
        }
      }
      throw error;
    }
  }

  /**
   * Runs a campaign's send when the number has a slot free and nothing
   * waits for one (conversations first), within the campaign's own rate
   * (`ratePerS`, null: the number's); adapts to throttling as `run` does.
   * With Redis away it waits for it rather than send unpaced.
   */
  async runCampaign<T>(
    phoneNumberId: string,
    campaignId: string,
    ratePerS: number | null,
    recipient: string,
    send: () => Promise<T>,
    numberRate: number | null = null,
    /** Stops the wait (the process shuts down): it throws the signal's reason. */
    signal?: AbortSignal,
  ): Promise<T> {
    const own = ratePerS ? Math.max(1, Math.round(1_000_000 / ratePerS)) : 0;
    for (;;) {
      signal?.throwIfAborted();
      let acquired: Acquired;
      try {
        acquired = await this.redis.campaignSlot(
          this.key('pace', phoneNumberId),
          this.key('pause', phoneNumberId),
          this.key('rate', phoneNumberId),
          this.key('campaign', campaignId),
          this.interval(numberRate),
          RECOVERY_PER_MS,
          own,
        );
      } catch {
        await sleep(1000, undefined, { signal });
        continue;
      }
      if (acquired[0] === 0) break;
      // A slow campaign's wait (1 / its rate) is cut short by a shutdown, not waited out.
      await sleep(Math.max(1, acquired[1]), undefined, { signal });
    }
    try {
      return await send();
    } catch (error) {
      if (error instanceof PlatformError) {
        await this.rememberThrottling(error, phoneNumberId, recipient);
      }
      throw error;
    }
  }

  /** The interval between a number's sends at full rate, in µs. */
  private interval(numberRate: number | null): number {
    return numberRate ? Math.max(1, Math.round(1_000_000 / numberRate)) : this.intervalMicros;
  }

  /** Whether the send had to wait for its turn. */
  private async waitForTurn(
    phoneNumberId: string,
    recipient: string,
    intervalMicros: number,
  ): Promise<boolean> {
    const deadline = Date.now() + PAIR_MAX_WAIT_MS;
    let waited = false;
    for (;;) {
      const acquired = await this.acquire(phoneNumberId, recipient, intervalMicros);
      if (!acquired) return waited;
      const [state, ms] = acquired;
      if (state === 0) {
        if (ms > 0) await sleep(ms);
        return waited || ms > 0;
      }
      if (state === 2 || Date.now() + ms > deadline) throw this.rateLimited(ms);
      await sleep(ms);
      waited = true;
    }
  }

  /** null when Redis cannot be asked: sends go on unpaced rather than stop. */
  private async acquire(
    phoneNumberId: string,
    recipient: string,
    intervalMicros: number,
  ): Promise<Acquired | null> {
    try {
      return await this.redis.acquireSendSlot(
        this.key('pace', phoneNumberId),
        this.key('pause', phoneNumberId),
        this.key('rate', phoneNumberId),
        this.key('pair-slow', phoneNumberId, recipient),
        this.key('pair-pace', phoneNumberId, recipient),
        intervalMicros,
        MAX_PACING_WAIT_MS,
        RECOVERY_PER_MS,
        PAIR_INTERVAL_MS * 1000,
        PAIR_MAX_WAIT_MS,
      );
    } catch {
      if (Date.now() - this.lastRedisWarning > 10_000) {
        this.lastRedisWarning = Date.now();
        this.logger.warn('Redis unavailable: sends are not paced');
      }
      return null;
    }
  }

  /** The wait the platform's throttling calls for, in ms; null when it was not throttling. */
  private async rememberThrottling(
    error: PlatformError,
    phoneNumberId: string,
    recipient: string,
  ): Promise<number | null> {
    const { platformCode, retryAfterSeconds } = error.failure;
    try {
      if (platformCode === NUMBER_THROTTLED_CODE) {
        const pauseMs = await this.redis.numberThrottled(
          this.key('pause', phoneNumberId),
          this.key('strikes', phoneNumberId),
          this.key('rate', phoneNumberId),
          (retryAfterSeconds ?? 0) * 1000,
          FIRST_PAUSE_MS,
          MAX_PAUSE_MS,
          STRIKES_TTL_S,
          RATE_CUT,
          MIN_RATE_FACTOR,
          RECOVERY_PER_MS,
        );
        this.logger.warn(
          { phoneNumberId, pauseMs },
          'the platform throttled the number: pausing it',
        );
        return pauseMs;
      }
      if (platformCode === PAIR_THROTTLED_CODE) {
        return await this.redis.pairThrottled(
          this.key('pair-slow', phoneNumberId, recipient),
          this.key('pair-pace', phoneNumberId, recipient),
          PAIR_INTERVAL_MS * 1000,
          PAIR_SLOW_TTL_S,
        );
      }
    } catch {
      // Redis away: the platform's own answer stands.
    }
    return null;
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
