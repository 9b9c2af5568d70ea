import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import {
  FOREIGN_KEY_VIOLATION,
  rows,
  sqlState,
  UNIQUE_VIOLATION,
  type Queryable,
} from '../database/sql.js';
import type { Account, AccountRole } from './account.types.js';

const SELECT_ACCOUNT = `SELECT a.*, COALESCE(
    (SELECT array_agg(i.instance_id ORDER BY i.instance_id) FROM account_instances i
     WHERE i.account_id = a.id), '{}') AS instance_ids
  FROM accounts a`;

/** The changes an update may carry; absent ones stay. */
export interface AccountChanges {
  display_name?: string;
  role?: AccountRole;
  instance_ids?: string[];
  disabled?: boolean;
  password_hash?: string;
}

/** A write refused: the username is taken (in any case), or an instance named is gone. */
export type AccountConflict = 'username_taken' | 'instance_gone';

/** The only home of SQL on `accounts` and `account_instances`. */
@Injectable()
export class AccountStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(account: {
    username: string;
    display_name: string;
    role: AccountRole;
    password_hash: string;
    instance_ids: string[];
  }): Promise<Account | AccountConflict> {
    return conflicts(() =>
      this.db.transaction(async (manager) => {
        const [row] = await rows<{ id: string }>(
          manager,
          `INSERT INTO accounts (username, display_name, role, password_hash)
           VALUES ($1, $2, $3, $4) RETURNING id`,
          [account.username, account.display_name, account.role, account.password_hash],
        );
        await this.setInstances(manager, row.id, account.instance_ids);
        return (await this.find(row.id, manager))!;
      }),
    );
  }

  list(): Promise<Account[]> {
    return rows<Account>(this.db, `${SELECT_ACCOUNT} ORDER BY lower(a.username), a.id`);
  }

  async find(id: string, db: Queryable = this.db): Promise<Account | null> {
    const [row] = await rows<Account>(db, `${SELECT_ACCOUNT} WHERE a.id = $1`, [id]);
    return row ?? null;
  }

  async findByUsername(username: string): Promise<Account | null> {
    const [row] = await rows<Account>(
      this.db,
      `${SELECT_ACCOUNT} WHERE lower(a.username) = lower($1)`,
      [username],
    );
    return row ?? null;
  }

  /**
   * The account after the changes, or null when there is none with this id. A
   * new password or a disable moves `sessions_since`: the tokens issued before
   * end, and re-enabling brings none back.
   */
  async update(id: string, changes: AccountChanges): Promise<Account | null | AccountConflict> {
    return conflicts(() =>
      this.db.transaction(async (manager) => {
        const [row] = await rows<{ id: string }>(
          manager,
          `UPDATE accounts SET
             display_name = COALESCE($2, display_name),
             role = COALESCE($3, role),
             disabled_at = CASE WHEN $4::boolean IS NULL THEN disabled_at
                                WHEN $4 THEN COALESCE(disabled_at, now()) END,
             password_hash = COALESCE($5, password_hash),
             password_changed_at = CASE WHEN $5 IS NULL THEN password_changed_at
                                        ELSE clock_timestamp() END,
             sessions_since = CASE WHEN $5 IS NOT NULL OR ($4 AND disabled_at IS NULL)
                                   THEN clock_timestamp() ELSE sessions_since END,
             updated_at = now()
           WHERE id = $1 RETURNING id`,
          [
            id,
            changes.display_name ?? null,
            changes.role ?? null,
            changes.disabled ?? null,
            changes.password_hash ?? null,
          ],
        );
        if (!row) return null;
        if (changes.instance_ids) await this.setInstances(manager, id, changes.instance_ids);
        return this.find(id, manager);
      }),
    );
  }

  private async setInstances(
    manager: EntityManager,
    id: string,
    instanceIds: string[],
  ): Promise<void> {
    await manager.query('DELETE FROM account_instances WHERE account_id = $1', [id]);
    await manager.query(
      `INSERT INTO account_instances (account_id, instance_id)
       SELECT $1, unnest($2::uuid[]) ON CONFLICT DO NOTHING`,
      [id, instanceIds],
    );
  }
}

/** A write, or the conflict that refused it. */
async function conflicts<T>(write: () => Promise<T>): Promise<T | AccountConflict> {
  try {
    return await write();
  } catch (error) {
    if (sqlState(error) === UNIQUE_VIOLATION) return 'username_taken';
    if (sqlState(error) === FOREIGN_KEY_VIOLATION) return 'instance_gone';
    throw error;
  }
}
