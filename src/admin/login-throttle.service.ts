import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import ipaddr from 'ipaddr.js';
import { AppException } from '../common/app.exception.js';
import { AppConfig } from '../config/app-config.js';
import { GCRA_LUA } from '../redis/rate-limiter.js';
import { REDIS_CLIENT } from '../redis/redis.constants.js';

/** Failed logins allowed for one username from one client address within the window. */
export const LOGIN_MAX_FAILURES = 10;
/** Failed logins allowed from one client address, whatever the usernames, within the window. */
export const LOGIN_MAX_FAILURES_PER_ADDRESS = 20;
export const LOGIN_WINDOW_SECONDS = 15 * 60;
/** Failures for a username, from any address, beyond which its attempts are paced. */
export const LOGIN_PACE_AFTER_FAILURES = 10;
/** The pace: attempts per second for such a username, from unknown devices at every address together… */
export const LOGIN_PACE_PER_SECOND = 1;
/** …each waiting for its slot at most this long, else refused with a Retry-After. */
export const LOGIN_PACE_MAX_WAIT_MS = 2000;
/** Failures with one known-device cookie, within the window, after which it counts as unknown. */
export const LOGIN_MAX_FAILURES_PER_DEVICE = 5;

const LIMITS_LUA = `
local function locked(pairKey, addressKey, maxPair, maxAddress)
  local keys, limits = {pairKey, addressKey}, {maxPair, maxAddress}
  for i = 1, 2 do
    if tonumber(redis.call('GET', keys[i]) or '0') >= limits[i] then
      return {i, redis.call('TTL', keys[i])}
    end
  end
  return nil
end
`;

/**
 * One attempt, atomically. Refused while the username at this address
 * ({1, ttl}) or the address itself ({2, ttl}) is at its limit. Then, once the
 * username has more than ARGV[4] failures, an attempt from an unknown device
 * takes a slot of the username's pace (KEYS[4]), up to ARGV[6] µs ahead, or is
 * refused ({3, ms until a slot}). A known device (ARGV[7] = '1') is one whose
 * cookie id (KEYS[5]) has fewer than ARGV[8] failures; it is counted there too.
 * An admitted attempt raises its counters before the password is compared, so
 * concurrent guesses can never exceed a limit, and gets {0, ms to wait for
 * its slot}. A refused one counts nothing: it was never compared.
 */
const ATTEMPT_SCRIPT = `${GCRA_LUA}${LIMITS_LUA}
local refused = locked(KEYS[1], KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2]))
if refused then return refused end
local known = ARGV[7] == '1' and tonumber(redis.call('GET', KEYS[5]) or '0') < tonumber(ARGV[8])
local wait = 0
if not known and tonumber(redis.call('GET', KEYS[3]) or '0') > tonumber(ARGV[4]) then
  local slot = gcra(KEYS[4], tonumber(ARGV[5]), 1, tonumber(ARGV[6]))
  if slot[1] == 0 then return {3, slot[2]} end
  wait = slot[2]
end
for i = 1, known and 5 or 3 do
  if i ~= 4 then
    redis.call('INCR', KEYS[i])
    redis.call('EXPIRE', KEYS[i], ARGV[3], 'NX')
  end
end
return {0, wait}
`;

/**
 * The queue dashboard with a known-device cookie, after its password was
 * compared (ARGV[5] = '1' when right). Atomically: a cookie id (KEYS[4]) with
 * ARGV[4] failures is no longer known ({4, 0}: check it as a login); a locked
 * address is refused ({1|2, ttl}), right password or not; else a wrong password
 * is counted (address, username and cookie id) and {0, 0}. Compared first so
 * the admin's own parallel requests never count or wait, yet a right password
 * is only ever accepted while fewer failures than the limit were counted.
 */
const DASHBOARD_SCRIPT = `${LIMITS_LUA}
if tonumber(redis.call('GET', KEYS[4]) or '0') >= tonumber(ARGV[4]) then return {4, 0} end
local refused = locked(KEYS[1], KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2]))
if refused then return refused end
if ARGV[5] == '0' then
  for i = 1, 4 do
    redis.call('INCR', KEYS[i])
    redis.call('EXPIRE', KEYS[i], ARGV[3], 'NX')
  end
end
return {0, 0}
`;

/** A right password: this address starts afresh, the username and the cookie id get their counts back. */
const SUCCESS_SCRIPT = `
redis.call('DEL', KEYS[1], KEYS[2])
for i = 3, 4 do
  if tonumber(redis.call('GET', KEYS[i]) or '0') > 0 then redis.call('DECR', KEYS[i]) end
end
return 0
`;

type ThrottleRedis = Redis & {
  loginSucceeded(
    pairKey: string,
    addressKey: string,
    usernameKey: string,
    deviceKey: string,
  ): Promise<number>;
  loginDashboard(
    pairKey: string,
    addressKey: string,
    usernameKey: string,
    deviceKey: string,
    maxPerPair: number,
    maxPerAddress: number,
    windowSeconds: number,
    maxPerDevice: number,
    right: 0 | 1,
  ): Promise<[0 | 1 | 2 | 4, number]>;
  loginAttempt(
    pairKey: string,
    addressKey: string,
    usernameKey: string,
    paceKey: string,
    deviceKey: string,
    maxPerPair: number,
    maxPerAddress: number,
    windowSeconds: number,
    paceAfter: number,
    paceIntervalMicros: number,
    paceMaxWaitMicros: number,
    knownDevice: 0 | 1,
    maxPerDevice: number,
  ): Promise<[0 | 1 | 2 | 3, number]>;
};

/**
 * The address a client's failures are counted under: an IPv4 address (an
 * IPv4-mapped IPv6 one as IPv4), or an IPv6 address's /64, since one client
 * is routinely given a whole /64 and could otherwise take a fresh address for
 * every guess.
 */
export function addressGroup(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const prefix = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${prefix.join(':')}::/64`;
}

/**
 * Limits failed logins in Redis, shared by every process. Within 15 minutes,
 * 10 failures for one username from one address (an IPv6 /64), or 20 from one
 * address whatever the usernames, answer 429 to that address until the window
 * passes. Beyond 10 failures for a username from every address, its attempts
 * from devices not known for it (see KnownDevices) share one pace across all
 * addresses, 1 a second, each waiting at most 2 s for its slot, else 429:
 * guessing is bounded in total, a fresh address still gets in once the burst
 * is past, and the admin's known browser is never held back by others (until
 * 5 failures with its cookie make it unknown: a stolen one is paced too). An
 * attempt is counted before the password is checked, so a burst of concurrent
 * guesses gets no more tries than a slow one.
 */
@Injectable()
export class LoginThrottleService {
  constructor(
    @Inject(REDIS_CLIENT) private readonly redis: ThrottleRedis,
    private readonly config: AppConfig,
  ) {
    if (typeof (redis as Partial<ThrottleRedis>).loginAttempt !== 'function') {
      redis.defineCommand('loginAttempt', { numberOfKeys: 5, lua: ATTEMPT_SCRIPT });
      redis.defineCommand('loginDashboard', { numberOfKeys: 4, lua: DASHBOARD_SCRIPT });
      redis.defineCommand('loginSucceeded', { numberOfKeys: 4, lua: SUCCESS_SCRIPT });
    }
  }

  /**
   * Counts an attempt and waits for its slot of the username's pace when it
   * needs one, or throws 429 rate_limited while this address is locked out
   * (for this username or for all) or the pace has no slot within its bound.
   * A known device (`deviceId`, its cookie's id) skips the pace while that id
   * has fewer than 5 failures. Call `succeeded` when the credentials were right.
   */
  async attempt(address: string, username: string, deviceId?: string): Promise<void> {
    const [refused, value] = await this.guard(
      this.redis.loginAttempt(
        this.pairKey(address, username),
        this.addressKey(address),
        this.usernameKey(username),
        this.paceKey(username),
        this.deviceKey(deviceId),
        LOGIN_MAX_FAILURES,
        LOGIN_MAX_FAILURES_PER_ADDRESS,
        LOGIN_WINDOW_SECONDS,
        LOGIN_PACE_AFTER_FAILURES,
        Math.round(1_000_000 / LOGIN_PACE_PER_SECOND),
        LOGIN_PACE_MAX_WAIT_MS * 1000,
        deviceId === undefined ? 0 : 1,
        LOGIN_MAX_FAILURES_PER_DEVICE,
      ),
    );
    if (refused === 0) {
      // Before the password is compared, right or wrong alike: the answer's timing tells nothing.
      if (value > 0) await sleep(value);
      return;
    }
    if (refused === 3) {
      throw this.rateLimited(
        'Too many failed logins for this username; try again shortly',
        Math.max(1, Math.ceil(value / 1000)),
      );
    }
    throw this.lockedOut(value);
  }

  /**
   * The queue dashboard with a known-device cookie, its password already
   * compared (`right`): throws 429 rate_limited while this address is locked
   * out, counts a wrong password (also against the cookie id), and returns
   * false when the cookie id has had 5 failures: then check it as a login.
   */
  async knownDashboardAttempt(
    address: string,
    username: string,
    deviceId: string,
    right: boolean,
  ): Promise<boolean> {
    const [refused, ttl] = await this.guard(
      this.redis.loginDashboard(
        this.pairKey(address, username),
        this.addressKey(address),
        this.usernameKey(username),
        this.deviceKey(deviceId),
        LOGIN_MAX_FAILURES,
        LOGIN_MAX_FAILURES_PER_ADDRESS,
        LOGIN_WINDOW_SECONDS,
        LOGIN_MAX_FAILURES_PER_DEVICE,
        right ? 1 : 0,
      ),
    );
    if (refused === 4) return false;
    if (refused !== 0) throw this.lockedOut(ttl);
    return true;
  }

  /** The attempt was right: this address starts afresh, the username and the cookie id get their counts back. */
  async succeeded(address: string, username: string, deviceId?: string): Promise<void> {
    await this.guard(
      this.redis.loginSucceeded(
        this.pairKey(address, username),
        this.addressKey(address),
        this.usernameKey(username),
        this.deviceKey(deviceId),
      ),
    );
  }

  private lockedOut(ttl: number): AppException {
    const retryAfter = ttl > 0 ? ttl : LOGIN_WINDOW_SECONDS;
    return this.rateLimited(`Too many failed logins; try again in ${retryAfter} s`, retryAfter);
  }

  private rateLimited(message: string, retryAfter: number): AppException {
    return new AppException('rate_limited', message, undefined, {
      'retry-after': String(retryAfter),
    });
  }

  private addressKey(address: string): string {
    return `${this.config.REDIS_PREFIX}:login-failures:${addressGroup(address)}`;
  }

  /** Without a cookie, a key never written (the script only reads it for a known device). */
  private deviceKey(deviceId: string | undefined): string {
    return `${this.config.REDIS_PREFIX}:login-failures:device:${deviceId ?? ''}`;
  }

  private paceKey(username: string): string {
    return `${this.config.REDIS_PREFIX}:login-pace:${this.digest(username)}`;
  }

  private usernameKey(username: string): string {
    return `${this.config.REDIS_PREFIX}:login-failures:user:${this.digest(username)}`;
  }

  private pairKey(address: string, username: string): string {
    return `${this.config.REDIS_PREFIX}:login-failures:pair:${this.digest(username)}:${addressGroup(address)}`;
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
