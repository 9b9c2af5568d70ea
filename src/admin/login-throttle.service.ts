import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { AppException } from '../common/app.exception.js';
import { AppConfig } from '../config/app-config.js';
import { REDIS_CLIENT } from '../redis/redis.constants.js';

/** Failed logins allowed per client address within the window. */
export const LOGIN_MAX_FAILURES = 10;
/** Failed logins allowed per username, across addresses, within the window. */
export const LOGIN_MAX_FAILURES_PER_USERNAME = 50;
export const LOGIN_WINDOW_SECONDS = 15 * 60;

/**
 * One attempt, atomically: refused while either counter is at its limit
 * ({1, ttl} for the address, {2, ttl} for the username); otherwise both
 * counters are raised before the password is compared ({0}), so concurrent
 * guesses can never exceed the limit. A right password gives its count back.
 */
const ATTEMPT_SCRIPT = `
local limits = {tonumber(ARGV[1]), tonumber(ARGV[2])}
for i = 1, 2 do
  if tonumber(redis.call('GET', KEYS[i]) or '0') >= limits[i] then
    return {i, redis.call('TTL', KEYS[i])}
  end
end
for i = 1, 2 do
  redis.call('INCR', KEYS[i])
  redis.call('EXPIRE', KEYS[i], ARGV[3], 'NX')
end
return {0, 0}
`;

/** A right password: the address starts afresh and the username gets its count back. */
const SUCCESS_SCRIPT = `
redis.call('DEL', KEYS[1])
if tonumber(redis.call('GET', KEYS[2]) or '0') > 0 then redis.call('DECR', KEYS[2]) end
return 0
`;

type ThrottleRedis = Redis & {
  loginSucceeded(addressKey: string, usernameKey: string): Promise<number>;
  loginAttempt(
    addressKey: string,
    usernameKey: string,
    maxPerAddress: number,
    maxPerUsername: number,
    windowSeconds: number,
  ): Promise<[0 | 1 | 2, number]>;
};

/**
 * Limits failed logins in Redis, shared by every process: 10 per client
 * address and 50 per username (whatever the address) within 15 minutes; then
 * 429 until the window passes. An attempt is counted before the password is
 * checked, so a burst of concurrent guesses gets no more tries than a slow one.
 */
@Injectable()
export class LoginThrottleService {
  constructor(
    @Inject(REDIS_CLIENT) private readonly redis: ThrottleRedis,
    private readonly config: AppConfig,
  ) {
    if (typeof (redis as Partial<ThrottleRedis>).loginAttempt !== 'function') {
      redis.defineCommand('loginAttempt', { numberOfKeys: 2, lua: ATTEMPT_SCRIPT });
      redis.defineCommand('loginSucceeded', { numberOfKeys: 2, lua: SUCCESS_SCRIPT });
    }
  }

  /**
   * Counts an attempt, or throws 429 rate_limited while the address or the
   * username is locked out. Call `succeeded` when the credentials were right.
   */
  async attempt(address: string, username: string): Promise<void> {
    const [locked, ttl] = await this.guard(
      this.redis.loginAttempt(
        this.addressKey(address),
        this.usernameKey(username),
        LOGIN_MAX_FAILURES,
        LOGIN_MAX_FAILURES_PER_USERNAME,
        LOGIN_WINDOW_SECONDS,
      ),
    );
    if (locked === 0) return;
    const retryAfter = ttl > 0 ? ttl : LOGIN_WINDOW_SECONDS;
    throw new AppException(
      'rate_limited',
      `Too many failed logins; try again in ${retryAfter} s`,
      undefined,
      { 'retry-after': String(retryAfter) },
    );
  }

  /** The attempt was right: the address starts afresh and the username gets its count back. */
  async succeeded(address: string, username: string): Promise<void> {
    await this.guard(
      this.redis.loginSucceeded(this.addressKey(address), this.usernameKey(username)),
    );
  }

  private addressKey(address: string): string {
    return `${this.config.REDIS_PREFIX}:login-failures:${address}`;
  }

  private usernameKey(username: string): string {
    const digest = createHash('sha256').update(username).digest('hex').slice(0, 32);
    return `${this.config.REDIS_PREFIX}:login-failures:user:${digest}`;
  }

  /** Without Redis the limit cannot be enforced: refuse rather than allow unlimited guessing. */
  private async guard<T>(operation: Promise<T>): Promise<T> {
    try {
      return await operation;
    } catch {
      throw new AppException(
        'unavailable',
        'Login is unavailable right now; try again shortly',
        undefined,
        {
          'retry-after': '5',
        },
      );
    }
  }
}
