import { createHmac } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { argon2id, hash, verify } from 'argon2';
import { AppException } from '../common/app.exception.js';
import { ACCOUNT_TOPIC, REQUEST_PATH_CACHE_TTL_MS } from '../common/cache-topics.js';
import { LocalCache } from '../common/local-cache.js';
import { AppConfig } from '../config/app-config.js';
import { CacheInvalidationService } from '../redis/cache-invalidation.service.js';
import { AccountStore, type AccountChanges } from './account.store.js';
import type { Account, AccountRole } from './account.types.js';

/**
 * argon2id as OWASP's password storage guidance sets it (19 MiB, 2 passes,
 * 1 lane): about 30 ms a hash here, which a login can afford and a guesser
 * with a stolen table cannot.
 */
const HASH_OPTIONS = { type: argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/** What a valid account token stands for, checked on each request (cached briefly). */
export interface AccountPrincipal {
  accountId: string;
  username: string;
  displayName: string;
  role: AccountRole;
  instanceIds: string[];
}

@Injectable()
export class AccountsService {
  /** A hash of nothing, verified against when a username is unknown: a miss takes as long as a wrong password. */
  private readonly decoy: Promise<string>;
  /** Accounts by id, as a request needs them; forgotten in every process when one changes. */
  private readonly principals = new LocalCache<{
    principal: AccountPrincipal;
    stamp: string;
  } | null>(REQUEST_PATH_CACHE_TTL_MS);

  constructor(
    private readonly store: AccountStore,
    private readonly invalidation: CacheInvalidationService,
    private readonly config: AppConfig,
  ) {
    this.decoy = hash('decoy password, never anyone’s', HASH_OPTIONS);
    invalidation.on(ACCOUNT_TOPIC, (id) => this.principals.delete(id));
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
      password_hash: await hash(input.password, HASH_OPTIONS),
      instance_ids: input.instance_ids,
    });
    if (!created) throw this.exists(input.username);
    return created;
  }

  list(): Promise<Account[]> {
    return this.store.list();
  }

  async get(id: string): Promise<Account> {
    const account = await this.store.find(id);
    if (!account) throw new AppException('account_not_found', `Account ${id} not found`);
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
      ...(password !== undefined ? { password_hash: await hash(password, HASH_OPTIONS) } : {}),
    });
    if (!updated) throw new AppException('account_not_found', `Account ${id} not found`);
    await this.invalidation.invalidate(ACCOUNT_TOPIC, id);
    return updated;
  }

  /**
   * The enabled account with these credentials, or null. Unknown usernames
   * cost one argon2 verification too, so timing does not tell them apart.
   */
  async verify(username: string, password: string): Promise<Account | null> {
    const account = await this.store.findByUsername(username);
    if (!account) {
      await verify(await this.decoy, password);
      return null;
    }
    const right = await verify(account.password_hash, password);
    return right && account.disabled_at === null ? account : null;
  }

  /**
   * A stamp of the account's current password, keyed with the JWT secret (it
   * reveals nothing): tokens carry it, and a new password ends the older ones.
   */
  stamp(account: Pick<Account, 'id' | 'password_changed_at'>): string {
    return createHmac('sha256', this.config.JWT_SECRET)
      .update(`account\0${account.id}\0${account.password_changed_at.toISOString()}`)
      .digest('base64url')
      .slice(0, 22);
  }

  /** Who a token for `accountId` with `stamp` is, or null: unknown, disabled, or an older password. */
  async principal(accountId: string, stamp: string): Promise<AccountPrincipal | null> {
    let cached = this.principals.get(accountId);
    if (cached === undefined) {
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
      this.principals.set(accountId, cached);
    }
    return cached && cached.stamp === stamp ? cached.principal : null;
  }

  private async checkInstances(ids: string[]): Promise<void> {
    const found = new Set(await this.store.existingInstances(ids));
    const missing = ids.find((id) => !found.has(id));
    if (missing) throw new AppException('instance_not_found', `Instance ${missing} not found`);
  }

  private exists(username: string): AppException {
    return new AppException('account_exists', `An account named ${username} exists already`);
  }
}
