import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { AppException } from '../common/app.exception.js';
import { AppConfig } from '../config/app-config.js';
import { REDIS_CLIENT } from '../redis/redis.constants.js';

/** Failed logins allowed for one username from one client address within the window. */
export const LOGIN_MAX_FAILURES = 10;
/** Failed logins allowed from one client address, whatever the usernames, within the window. */
export const LOGIN_MAX_FAILURES_PER_ADDRESS = 20;
export const LOGIN_WINDOW_SECONDS = 15 * 60;
/** Failures for a username, from any address, before its attempts are slowed. */
export const LOGIN_SLOW_AFTER_FAILURES = 10;
/** Each failure beyond that adds this much to the wait of the username's next attempts… */
export const LOGIN_DELAY_STEP_MS = 100;
/** …up to this: a bounded wait per attempt, never a refusal and never a queue. */
export const LOGIN_MAX_DELAY_MS = 2000;

/**
 * One attempt, atomically. Refused while the username at this address
 * ({1, ttl}) or the address itself ({2, ttl}) is at its limit; otherwise the
 * three counters are raised before the password is compared, so concurrent
 * guesses can never exceed a limit, and {0, wait ms} comes back: the wait the
 * username's failures from every address call for.
 */
const ATTEMPT_SCRIPT = `
local limits = {tonumber(ARGV[1]), tonumber(ARGV[2])}
for i = 1, 2 do
  if tonumber(redis.call('GET', KEYS[i]) or '0') >= limits[i] then
    return {i, redis.call('TTL', KEYS[i])}
  end
end
local failures = tonumber(redis.call('GET', KEYS[3]) or '0')
for i = 1, 3 do
  redis.call('INCR', KEYS[i])
  redis.call('EXPIRE', KEYS[i], ARGV[3], 'NX')
end
local over = failures - tonumber(ARGV[4])
if over <= 0 then return {0, 0} end
return {0, math.min(tonumber(ARGV[6]), over * tonumber(ARGV[5]))}
`;

/** A right password: this address starts afresh and the username gets its count back. */
const SUCCESS_SCRIPT = `
redis.call('DEL', KEYS[1], KEYS[2])
if tonumber(redis.call('GET', KEYS[3]) or '0') > 0 then redis.call('DECR', KEYS[3]) end
return 0
`;

type ThrottleRedis = Redis & {
  loginSucceeded(pairKey: string, addressKey: string, usernameKey: string): Promise<number>;
  loginAttempt(
    pairKey: string,
    addressKey: string,
    usernameKey: string,
    maxPerPair: number,
    maxPerAddress: number,
    windowSeconds: number,
    slowAfter: number,
    delayStepMs: number,
    maxDelayMs: number,
  ): Promise<[0 | 1 | 2, number]>;
};

/**
 * Limits failed logins in Redis, shared by every process. Within 15 minutes,
 * 10 failures for one username from one address, or 20 from one address
 * whatever the usernames, answer 429 to that address until the window passes.
 * A username's failures from every address only slow its attempts (a wait
 * per attempt, at most LOGIN_MAX_DELAY_MS) and never refuse them: guesses
 * from elsewhere cannot lock the admin out. An attempt is counted before the
 * password is checked, so a burst of concurrent guesses gets no more tries
 * than a slow one.
 */
@Injectable()
export class LoginThrottleService {
  constructor(
    @Inject(REDIS_CLIENT) private readonly redis: ThrottleRedis,
    private readonly config: AppConfig,
  ) {
    if (typeof (redis as Partial<ThrottleRedis>).loginAttempt !== 'function') {
      redis.defineCommand('loginAttempt', { numberOfKeys: 3, lua: ATTEMPT_SCRIPT });
      redis.defineCommand('loginSucceeded', { numberOfKeys: 3, lua: SUCCESS_SCRIPT });
    }
  }

  /**
   * Counts an attempt and waits as long as the username's failures call for,
   * or throws 429 rate_limited while this address is locked out (for this
   * username or for all). Call `succeeded` when the credentials were right.
   */
  async attempt(address: string, username: string): Promise<void> {
    const [locked, value] = await this.guard(
      this.redis.loginAttempt(
        this.pairKey(address, username),
        this.addressKey(address),
        this.usernameKey(username),
        LOGIN_MAX_FAILURES,
        LOGIN_MAX_FAILURES_PER_ADDRESS,
        LOGIN_WINDOW_SECONDS,
        LOGIN_SLOW_AFTER_FAILURES,
        LOGIN_DELAY_STEP_MS,
        LOGIN_MAX_DELAY_MS,
      ),
    );
    if (locked === 0) {
      // Before the password is compared, right or wrong alike: the answer's timing tells nothing.
      if (value > 0) await sleep(value);
      return;
    }
    const retryAfter = value > 0 ? value : LOGIN_WINDOW_SECONDS;
    throw new AppException(
      'rate_limited',
      `Too many failed logins; try again in ${retryAfter} s`,
      undefined,
      { 'retry-after': String(retryAfter) },
    );
  }

  /** The attempt was right: this address starts afresh and the username gets its count back. */
  async succeeded(address: string, username: string): Promise<void> {
    await this.guard(
      this.redis.loginSucceeded(
        this.pairKey(address, username),
        this.addressKey(address),
        this.usernameKey(username),
      ),
    );
  }

  private addressKey(address: string): string {
    return `${this.config.REDIS_PREFIX}:login-failures:${address}`;
  }

  private usernameKey(username: string): string {
    return `${this.config.REDIS_PREFIX}:login-failures:user:${this.digest(username)}`;
  }

  private pairKey(address: string, username: string): string {
    return `${this.config.REDIS_PREFIX}:login-failures:pair:${this.digest(username)}:${address}`;
  }

  /** Usernames as typed can be anything: keys hold a digest. */
  private digest(username: string): string {
    return createHash('sha256').update(username).digest('hex').slice(0, 32);
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
