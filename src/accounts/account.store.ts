import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { rows, sqlState, UNIQUE_VIOLATION, type Queryable } from '../database/sql.js';
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

/** The only home of SQL on `accounts` and `account_instances`. */
@Injectable()
export class AccountStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The new account, or null when its username (in any case) is taken. */
  async insert(account: {
    username: string;
    display_name: string;
    role: AccountRole;
    password_hash: string;
    instance_ids: string[];
  }): Promise<Account | null> {
    try {
      return await this.db.transaction(async (manager) => {
        const [row] = await rows<{ id: string }>(
          manager,
          `INSERT INTO accounts (username, display_name, role, password_hash)
           VALUES ($1, $2, $3, $4) RETURNING id`,
          [account.username, account.display_name, account.role, account.password_hash],
        );
        await this.setInstances(manager, row.id, account.instance_ids);
        return (await this.find(row.id, manager))!;
      });
    } catch (error) {
      if (sqlState(error) === UNIQUE_VIOLATION) return null;
      throw error;
    }
  }

  list(): Promise<Account[]> {
    return rows<Account>(this.db, `${SELECT_ACCOUNT} ORDER BY lower(a.username)`);
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

  /** The account after the changes, or null when there is none with this id. */
  async update(id: string, changes: AccountChanges): Promise<Account | null> {
    return this.db.transaction(async (manager) => {
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
    });
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

  /** Of these instance ids, the ones that exist. */
  async existingInstances(ids: string[]): Promise<string[]> {
    const found = await rows<{ id: string }>(
      this.db,
      'SELECT id FROM instances WHERE id = ANY($1::uuid[])',
      [ids],
    );
    return found.map((row) => row.id);
  }
}
