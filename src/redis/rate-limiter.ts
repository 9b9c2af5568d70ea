import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { AppConfig } from '../config/app-config.js';
import { REDIS_CLIENT } from './redis.constants.js';

/**
 * GCRA (a token bucket kept as one timestamp) over one key, in Redis so all
 * processes share it, as a Lua function other scripts include. A request may
 * take a slot up to `maxWait` µs ahead (0: only a free one): {1, ms until its
 * slot} when it got one, {0, ms until one would be free} when not.
 */
export const GCRA_LUA = `
local function gcra(key, interval, burst, maxWait)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local tolerance = interval * (burst - 1)
  local tat = tonumber(redis.call('GET', key) or '0')
  if tat < now then tat = now end
  local wait = tat - tolerance - now
  if wait > maxWait then return {0, math.ceil(wait / 1000)} end
  local nextTat = tat + interval
  redis.call('SET', key, string.format('%d', nextTat), 'PX', math.ceil((nextTat - now) / 1000) + 1000)
  if wait < 0 then wait = 0 end
  return {1, math.ceil(wait / 1000)}
end
`;

const TAKE_SCRIPT = `${GCRA_LUA}
return gcra(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), 0)
`;

type LimiterRedis = Redis & {
  rateLimitTake(key: string, intervalMicros: number, burst: number): Promise<[0 | 1, number]>;
};

export interface RateLimit {
  /** Requests per second, sustained. */
  perSecond: number;
  /** Requests that may come at once. */
  burst: number;
}

/** Rate limits shared by every process. Without Redis, requests pass (and a warning is logged). */
@Injectable()
export class RateLimiter {
  private readonly logger = new Logger(RateLimiter.name);
  private lastWarning = 0;

  constructor(
    @Inject(REDIS_CLIENT) private readonly redis: LimiterRedis,
    private readonly config: AppConfig,
  ) {
    if (typeof (redis as Partial<LimiterRedis>).rateLimitTake !== 'function') {
      redis.defineCommand('rateLimitTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    }
  }

  /** Takes one request from the bucket `name`: 0 when it may pass, else the ms to wait. */
  async take(name: string, limit: RateLimit): Promise<number> {
    try {
      const [allowed, waitMs] = await this.redis.rateLimitTake(
        `${this.config.REDIS_PREFIX}:rate:${name}`,
        Math.max(1, Math.round(1_000_000 / limit.perSecond)),
        Math.max(1, Math.floor(limit.burst)),
      );
      return allowed === 1 ? 0 : Math.max(1, waitMs);
    } catch {
      if (Date.now() - this.lastWarning > 10_000) {
        this.lastWarning = Date.now();
        this.logger.warn('Redis unavailable: rate limits are not enforced');
      }
      return 0;
    }
  }
}
