import { createHmac } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { argon2id, hash, verify } from 'argon2';
import pLimit from 'p-limit';
import { AppException } from '../common/app.exception.js';
import { ACCOUNT_TOPIC, REQUEST_PATH_CACHE_TTL_MS } from '../common/cache-topics.js';
import { LocalCache } from '../common/local-cache.js';
import { AppConfig } from '../config/app-config.js';
import { InstancesService } from '../instances/instances.service.js';
import { CacheInvalidationService } from '../redis/cache-invalidation.service.js';
import { AccountStore, type AccountChanges, type AccountConflict } from './account.store.js';
import type { Account, AccountRole } from './account.types.js';

/**
 * argon2id as OWASP's password storage guidance sets it (19 MiB, 2 passes,
 * 1 lane): about 30 ms a hash here, which a login can afford and a guesser
 * with a stolen table cannot.
 */
const HASH_OPTIONS = { type: argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/**
 * At most this many hashes at once per process: they run on libuv's four
 * threads, which file and DNS work share; a flood of logins then queues
 * instead of starving the rest.
 */
const HASHING = pLimit(2);

/** What a valid account token stands for, checked on each request (cached briefly). */
export interface AccountPrincipal {
  accountId: string;
  username: string;
  displayName: string;
  role: AccountRole;
  instanceIds: string[];
}

type Cached = { principal: AccountPrincipal; stamp: string } | null;

@Injectable()
export class AccountsService {
  /** A hash of nothing, verified against when no account is checked: every login costs one verification. */
  private readonly decoy: Promise<string>;
  /** Accounts by id, as a request needs them; forgotten in every process when one changes. */
  private readonly principals = new LocalCache<Cached>(REQUEST_PATH_CACHE_TTL_MS);
  /** How many times any account was forgotten (all at once on a reconnect): a read that began before is not cached. */
  private generation = 0;

  constructor(
    private readonly store: AccountStore,
    private readonly instances: InstancesService,
    private readonly invalidation: CacheInvalidationService,
    private readonly config: AppConfig,
  ) {
    this.decoy = HASHING(() => hash('decoy password, never anyone’s', HASH_OPTIONS));
    invalidation.on(ACCOUNT_TOPIC, (id) => {
      this.principals.delete(id);
      this.generation++;
    });
  }

  async create(input: {
    username: string;
    display_name: string;
    role: AccountRole;
    password: string;
    instance_ids: string[];
  }): Promise<Account> {
    if (input.username.toLowerCase() === this.config.ADMIN_USERNAME.toLowerCase()) {
      throw this.exists(input.username);
    }
    await this.checkInstances(input.instance_ids);
    const created = await this.store.insert({
      username: input.username,
      display_name: input.display_name,
      role: input.role,
      password_hash: await HASHING(() => hash(input.password, HASH_OPTIONS)),
      instance_ids: input.instance_ids,
    });
    return this.written(created, input.username);
  }

  list(): Promise<Account[]> {
    return this.store.list();
  }

  async get(id: string): Promise<Account> {
    const account = await this.store.find(id);
    if (!account) throw this.notFound(id);
    return account;
  }

  /** Changes an account; a new password, a disable or a changed role or scope apply to its open sessions at once. */
  async update(
    id: string,
    changes: Omit<AccountChanges, 'password_hash'> & { password?: string },
  ): Promise<Account> {
    if (changes.instance_ids) await this.checkInstances(changes.instance_ids);
    const { password, ...rest } = changes;
    const updated = await this.store.update(id, {
      ...rest,
      ...(password !== undefined
        ? { password_hash: await HASHING(() => hash(password, HASH_OPTIONS)) }
        : {}),
    });
    if (updated === null) throw this.notFound(id);
    const account = this.written(updated, '');
    await this.invalidation.invalidate(ACCOUNT_TOPIC, id);
    return account;
  }

  /**
   * The enabled account with these credentials, or null. Unknown usernames
   * cost one argon2 verification too, so timing does not tell them apart.
   */
  async verify(username: string, password: string): Promise<Account | null> {
    const account = await this.store.findByUsername(username);
    if (!account) {
      await this.spendVerification(password);
      return null;
    }
    const right = await HASHING(() => verify(account.password_hash, password));
    return right && account.disabled_at === null ? account : null;
  }

  /** One verification against nothing: a login that checks no account costs as long as one that does. */
  async spendVerification(password: string): Promise<void> {
    const decoy = await this.decoy;
    await HASHING(() => verify(decoy, password));
  }

  /**
   * A stamp of the account's current sessions, keyed with the JWT secret (it
   * reveals nothing): tokens carry it, and a new password or a disable ends
   * the older ones.
   */
  stamp(account: Pick<Account, 'id' | 'sessions_since'>): string {
    return createHmac('sha256', this.config.JWT_SECRET)
      .update(`account\0${account.id}\0${account.sessions_since.toISOString()}`)
      .digest('base64url')
      .slice(0, 22);
  }

  /** Who a token for `accountId` with `stamp` is, or null: unknown, disabled, or older than its sessions. */
  async principal(accountId: string, stamp: string): Promise<AccountPrincipal | null> {
    let cached = this.principals.get(accountId);
    if (cached === undefined) {
      const generation = this.generation;
      const account = await this.store.find(accountId);
      cached =
        account && account.disabled_at === null
          ? {
              stamp: this.stamp(account),
              principal: {
                accountId: account.id,
                username: account.username,
                displayName: account.display_name,
                role: account.role,
                instanceIds: account.instance_ids,
              },
            }
          : null;
      // A change that landed while this read ran: the next request reads again.
      if (this.generation === generation) this.principals.set(accountId, cached);
    }
    return cached && cached.stamp === stamp ? cached.principal : null;
  }

  private async checkInstances(ids: string[]): Promise<void> {
    for (const id of new Set(ids)) await this.instances.get(id);
  }

  private written(result: Account | AccountConflict, username: string): Account {
    if (result === 'username_taken') throw this.exists(username);
    if (result === 'instance_gone') {
      throw new AppException('instance_not_found', 'An instance in instance_ids no longer exists');
    }
    return result;
  }

  private notFound(id: string): AppException {
    return new AppException('account_not_found', `Account ${id} not found`);
  }

  private exists(username: string): AppException {
    return new AppException('account_exists', `An account named ${username} exists already`);
  }
}
