import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { rows } from '../database/sql.js';
import type { StoredSecret } from '../crypto/stale-secrets.js';
import type { Instance } from './instance.types.js';

/** The columns holding secrets (encrypted, bound to the instance id). */
export type InstanceSecretColumn = 'access_token_encrypted' | 'agent_token_encrypted';

/** The columns a create sets (the rest take their defaults). */
export type NewInstance = Omit<
  Instance,
  | 'created_at'
  | 'updated_at'
  | 'token_rejected_at'
  | 'agent_enabled'
  | 'agent_url'
  | 'agent_token_encrypted'
  | 'agent_buffer_delay_s'
  | 'agent_buffer_max_wait_s'
  | 'agent_typing_indicator'
  | 'send_rate'
  | 'marketing_messages'
  | 'daily_limit'
  | 'coexistence'
>;

/** The columns a change may set. */
export type InstanceChanges = Partial<
  Omit<Instance, 'id' | 'phone_number_id' | 'webhook_verify_token' | 'created_at' | 'updated_at'>
>;

const CHANGEABLE: ReadonlyArray<keyof InstanceChanges> = [
  'name',
  'send_rate',
  'marketing_messages',
  'coexistence',
  'channel_account_id',
  'business_id',
  'platform_app_id',
  'access_token_encrypted',
  'token_type',
  'display_phone_number',
  'verified_name',
  'quality_rating',
  'messaging_limit_tier',
  'is_active',
  'status',
  'token_rejected_at',
  'agent_enabled',
  'agent_url',
  'agent_token_encrypted',
  'agent_buffer_delay_s',
  'agent_buffer_max_wait_s',
  'agent_typing_indicator',
];

/** The only home of SQL on `instances`. */
@Injectable()
export class InstanceStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Inserts the instance; a second one for the same number fails with a unique violation. */
  async insert(instance: NewInstance): Promise<Instance> {
    const columns = Object.keys(instance) as Array<keyof NewInstance>;
    const account = columns.indexOf('channel_account_id') + 1;
    // The business's daily limit, as its account's other numbers know it.
    const [row] = await rows<Instance>(
      this.db,
      `INSERT INTO instances (${columns.join(', ')}, daily_limit)
       VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')},
         (SELECT s.daily_limit FROM instances s
          WHERE s.channel_account_id = $${account}::varchar AND s.daily_limit IS NOT NULL
          ORDER BY s.updated_at DESC LIMIT 1))
       RETURNING *`,
      columns.map((column) => instance[column]),
    );
    return row;
  }

  list(): Promise<Instance[]> {
    return rows<Instance>(this.db, 'SELECT * FROM instances ORDER BY created_at, id');
  }

  async findById(id: string): Promise<Instance | null> {
    const [row] = await rows<Instance>(this.db, 'SELECT * FROM instances WHERE id = $1', [id]);
    return row ?? null;
  }

  async findByPhoneNumberId(phoneNumberId: string): Promise<Instance | null> {
    const [row] = await rows<Instance>(
      this.db,
      'SELECT * FROM instances WHERE phone_number_id = $1',
      [phoneNumberId],
    );
    return row ?? null;
  }

  async numberTaken(phoneNumberId: string): Promise<boolean> {
    const found = await rows(this.db, 'SELECT 1 FROM instances WHERE phone_number_id = $1', [
      phoneNumberId,
    ]);
    return found.length > 0;
  }

  /** Whether some instance has this webhook verify token. */
  async verifyTokenExists(token: string): Promise<boolean> {
    const found = await rows(this.db, 'SELECT 1 FROM instances WHERE webhook_verify_token = $1', [
      token,
    ]);
    return found.length > 0;
  }

  /** Whether a business account has an active instance. */
  async activeForAccount(channelAccountId: string): Promise<boolean> {
    const found = await rows(
      this.db,
      'SELECT 1 FROM instances WHERE channel_account_id = $1 AND is_active LIMIT 1',
      [channelAccountId],
    );
    return found.length > 0;
  }

  /**
   * The platform raised a number's throughput: it is named only by its
   * display number (any format). The instances changed.
   */
  async setSendRateByDisplayNumber(digits: string, rate: number): Promise<Instance[]> {
    return rows<Instance>(
      this.db,
      `UPDATE instances SET send_rate = $2, updated_at = now()
       WHERE regexp_replace(COALESCE(display_phone_number, ''), '[^0-9]', '', 'g') = $1
         AND send_rate IS DISTINCT FROM $2
       RETURNING *`,
      [digits, rate],
    );
  }

  /** Marks the number shared with the phone app; the instance when it was not yet. */
  async markCoexistence(phoneNumberId: string): Promise<Instance | null> {
    const [row] = await rows<Instance>(
      this.db,
      `UPDATE instances SET coexistence = true, updated_at = now()
       WHERE phone_number_id = $1 AND NOT coexistence RETURNING *`,
      [phoneNumberId],
    );
    return row ?? null;
  }

  /** Sets the daily limit of every instance of a business account; those it changed. */
  async setDailyLimit(channelAccountId: string, limit: number | null): Promise<Instance[]> {
    return rows<Instance>(
      this.db,
      `UPDATE instances SET daily_limit = $2, updated_at = now()
       WHERE channel_account_id = $1 AND daily_limit IS DISTINCT FROM $2
       RETURNING *`,
      [channelAccountId, limit],
    );
  }

  /** Applies the changes; null when the instance is gone. */
  async update(id: string, changes: InstanceChanges): Promise<Instance | null> {
    const columns = CHANGEABLE.filter((column) => changes[column] !== undefined);
    const [row] = await rows<Instance>(
      this.db,
      `UPDATE instances SET ${columns.map((column, i) => `${column} = $${i + 2}`).join(', ')}${
        columns.length > 0 ? ', ' : ''
      }updated_at = now()
       WHERE id = $1 RETURNING *`,
      [id, ...columns.map((column) => changes[column])],
    );
    return row ?? null;
  }

  /** Deletes the instance (its API keys and messages go with it); false when it was not there. */
  async delete(id: string): Promise<boolean> {
    const deleted = await rows(this.db, 'DELETE FROM instances WHERE id = $1 RETURNING id', [id]);
    return deleted.length > 0;
  }

  /** Marks the token refused by the platform; whether this call marked it (it was not already). */
  async markTokenRejected(id: string): Promise<boolean> {
    const marked = await rows(
      this.db,
      `UPDATE instances SET token_rejected_at = now(), updated_at = now()
       WHERE id = $1 AND token_rejected_at IS NULL RETURNING id`,
      [id],
    );
    return marked.length > 0;
  }

  /** Every stored secret: platform access tokens and agent tokens. */
  secrets(): Promise<Array<StoredSecret<InstanceSecretColumn>>> {
    return rows(
      this.db,
      `SELECT id, 'access_token_encrypted' AS column, access_token_encrypted AS value FROM instances
       UNION ALL
       SELECT id, 'agent_token_encrypted', agent_token_encrypted FROM instances
       WHERE agent_token_encrypted IS NOT NULL`,
    );
  }

  /** Replaces a secret only if nobody changed it meanwhile; whether it did. */
  async replaceSecret(secret: StoredSecret<InstanceSecretColumn>, next: string): Promise<boolean> {
    const { column } = secret;
    const updated = await rows(
      this.db,
      `UPDATE instances SET ${column} = $3 WHERE id = $1 AND ${column} = $2 RETURNING id`,
      [secret.id, secret.value, next],
    );
    return updated.length > 0;
  }
}
