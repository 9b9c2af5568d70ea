import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { AppException } from '../common/app.exception.js';
import { AppConfig } from '../config/app-config.js';
import { REDIS_CLIENT } from '../redis/redis.constants.js';

export const LOGIN_MAX_FAILURES = 10;
export const LOGIN_WINDOW_SECONDS = 15 * 60;

/**
 * Counts failed logins per client address in Redis, shared by every process:
 * after 10 failures within 15 minutes the address gets 429 until the window passes.
 */
@Injectable()
export class LoginThrottleService {
  constructor(
    @Inject(REDIS_CLIENT) private readonly redis: Redis,
    private readonly config: AppConfig,
  ) {}

  /** Throws 429 rate_limited while the address is locked out. */
  async assertAllowed(address: string): Promise<void> {
    const key = this.key(address);
    const [failures, ttl] = await this.guard(
      Promise.all([this.redis.get(key), this.redis.ttl(key)]),
    );
    if (Number(failures ?? 0) >= LOGIN_MAX_FAILURES) {
      const retryAfter = ttl > 0 ? ttl : LOGIN_WINDOW_SECONDS;
      throw new AppException(
        'rate_limited',
        `Too many failed logins; try again in ${retryAfter} s`,
        undefined,
        { 'retry-after': String(retryAfter) },
      );
    }
  }

  async recordFailure(address: string): Promise<void> {
    const key = this.key(address);
    // The window starts at the first failure (NX keeps it from sliding).
    await this.guard(this.redis.multi().incr(key).expire(key, LOGIN_WINDOW_SECONDS, 'NX').exec());
  }

  async reset(address: string): Promise<void> {
    await this.guard(this.redis.del(this.key(address)));
  }

  private key(address: string): string {
    return `${this.config.REDIS_PREFIX}:login-failures:${address}`;
  }

  /** Without Redis the limit cannot be enforced: refuse rather than allow unlimited guessing. */
  private async guard<T>(operation: Promise<T>): Promise<T> {
    try {
      return await operation;
    } catch {
      throw new AppException('unavailable', 'Login is unavailable right now; try again shortly');
    }
  }
}
