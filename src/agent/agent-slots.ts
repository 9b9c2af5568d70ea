import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { AppConfig } from '../config/app-config.js';
import { REDIS_CLIENT } from '../redis/redis.constants.js';

/**
 * KEYS: the instance's slots (holder → expiry ms), its waiting turns (turn →
 * since ms). ARGV: holder, turn id, limit, expiry ms. Slots past their expiry
 * (a process died mid-call, a turn never came for the slot kept for it) are
 * dropped first. The slot kept for this turn, else a free one. 1: taken; 0:
 * all in use.
 */
const TAKE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local kept = 'kept:' .. ARGV[2]
if redis.call('ZREM', KEYS[1], kept) == 0 and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]) + 60000)
redis.call('ZREM', KEYS[2], ARGV[2])
return 1
`;

/**
 * KEYS as above; ARGV: turn id, limit. Puts the turn in line for the next
 * released slot, unless one came free meanwhile (1: try again now).
 */
const WAIT_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then return 1 end
redis.call('ZADD', KEYS[2], 'NX', now, ARGV[1])
redis.call('PEXPIRE', KEYS[2], 86400000)
return 0
`;

/** KEYS[1]: the instance's slots; ARGV: holder, expiry ms. Extends a slot still held. */
const RENEW_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) + 60000)
return 1
`;

/**
 * KEYS as above; ARGV: holder, expiry ms. Frees the slot, or hands it to the
 * turn longest in line (kept for it until the expiry): that turn, to wake.
 */
const RELEASE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREM', KEYS[1], ARGV[1])
local next = redis.call('ZPOPMIN', KEYS[2])
if next[1] then redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), 'kept:' .. next[1]) end
return next[1]
`;

type SlotsRedis = Redis & {
  agentSlotTake(
    slots: string,
    waiting: string,
    holder: string,
    turnId: string,
    limit: number,
    expiryMs: number,
  ): Promise<0 | 1>;
  agentSlotWait(slots: string, waiting: string, turnId: string, limit: number): Promise<0 | 1>;
  agentSlotRenew(slots: string, holder: string, expiryMs: number): Promise<1>;
  agentSlotRelease(
    slots: string,
    waiting: string,
    holder: string,
    expiryMs: number,
  ): Promise<string | null>;
};

/** A slot held for one agent call; `release` says which waiting turn to wake, if any. */
export interface AgentSlot {
  release(): Promise<string | null>;
}

const NO_LIMIT: AgentSlot = { release: () => Promise.resolve(null) };

/**
 * A semaphore per instance in Redis, shared by every worker process: at most
 * AGENT_MAX_CONCURRENCY_PER_INSTANCE agent calls of one instance at once. A
 * turn that finds none free is put in line; when a call of its instance
 * ends, the slot is kept for the turn longest in line, which is woken (the
 * sweeper wakes waiting turns too, should that wake-up be lost; a slot kept
 * for a turn that does not come frees itself after TURN_LEASE_S). A
 * slot is renewed while its call runs and expires TURN_LEASE_S after its last
 * renewal, so one held by a process that died comes free by itself. Without
 * Redis the limit is not enforced (a warning is logged): calls go on.
 */
@Injectable()
export class AgentSlots {
  private readonly logger = new Logger(AgentSlots.name);
  private lastWarning = 0;

  constructor(
    @Inject(REDIS_CLIENT) private readonly redis: SlotsRedis,
    private readonly config: AppConfig,
  ) {
    if (typeof (redis as Partial<SlotsRedis>).agentSlotTake !== 'function') {
      redis.defineCommand('agentSlotTake', { numberOfKeys: 2, lua: TAKE_SCRIPT });
      redis.defineCommand('agentSlotWait', { numberOfKeys: 2, lua: WAIT_SCRIPT });
      redis.defineCommand('agentSlotRenew', { numberOfKeys: 1, lua: RENEW_SCRIPT });
      redis.defineCommand('agentSlotRelease', { numberOfKeys: 2, lua: RELEASE_SCRIPT });
    }
  }

  private get limit(): number {
    return this.config.AGENT_MAX_CONCURRENCY_PER_INSTANCE;
  }

  private keys(instanceId: string): [string, string] {
    const base = `${this.config.REDIS_PREFIX}:agent-slots:${instanceId}`;
    return [base, `${base}:waiting`];
  }

  /**
   * A slot for one call of the turn, or null when the instance's are all in
   * use. It lasts a turn lease and is renewed as the lease is, until released:
   * one held by a process that died frees itself when that process's turns
   * can be resumed.
   */
  async take(instanceId: string, turnId: string): Promise<AgentSlot | null> {
    if (this.limit === 0) return NO_LIMIT;
    const keys = this.keys(instanceId);
    const holder = `${turnId}/${randomBytes(6).toString('hex')}`;
    const expiryMs = this.config.TURN_LEASE_S * 1000;
    try {
      const taken = await this.redis.agentSlotTake(...keys, holder, turnId, this.limit, expiryMs);
      if (taken === 0) return null;
    } catch (error) {
      this.warn(error);
      return NO_LIMIT;
    }
    const renewal = setInterval(() => {
      this.redis.agentSlotRenew(keys[0], holder, expiryMs).catch((error: unknown) => {
        this.warn(error);
      });
    }, expiryMs / 3);
    renewal.unref();
    return {
      release: () => {
        clearInterval(renewal);
        return this.redis.agentSlotRelease(...keys, holder, expiryMs).catch((error: unknown) => {
          // The slot expires by itself; waiting turns are woken by the sweeper.
          this.warn(error);
          return null;
        });
      },
    };
  }

  /**
   * Puts a turn that found no slot in line, once its wait is recorded; true
   * when a slot came free meanwhile (the turn should be woken at once).
   */
  async waitInLine(instanceId: string, turnId: string): Promise<boolean> {
    try {
      return (await this.redis.agentSlotWait(...this.keys(instanceId), turnId, this.limit)) === 1;
    } catch (error) {
      this.warn(error);
      return true;
    }
  }

  private warn(error: unknown): void {
    if (Date.now() - this.lastWarning < 10_000) return;
    this.lastWarning = Date.now();
    this.logger.warn(
      { err: (error as Error).message },
      'Redis unavailable: the per-instance limit of agent calls is not enforced',
    );
  }
}
