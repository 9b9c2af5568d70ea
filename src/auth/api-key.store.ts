import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { rows } from '../database/sql.js';
import type { ApiKey } from './api-key.types.js';

/** The only home of SQL on `api_keys`. */
@Injectable()
export class ApiKeyStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(key: Pick<ApiKey, 'name' | 'instance_id' | 'key_hash' | 'prefix'>): Promise<ApiKey> {
    const [row] = await rows<ApiKey>(
      this.db,
      `INSERT INTO api_keys (name, instance_id, key_hash, prefix) VALUES ($1, $2, $3, $4)
       RETURNING *`,
      [key.name, key.instance_id, key.key_hash, key.prefix],
    );
    return row;
  }

  list(): Promise<ApiKey[]> {
    return rows<ApiKey>(this.db, 'SELECT * FROM api_keys ORDER BY created_at, id');
  }

  /** Deletes a key; its hash, or null when it was not there. */
  async delete(id: string): Promise<string | null> {
    const [row] = await rows<Pick<ApiKey, 'key_hash'>>(
      this.db,
      'DELETE FROM api_keys WHERE id = $1 RETURNING key_hash',
      [id],
    );
    return row?.key_hash ?? null;
  }

  /** The key with this hash (hex). */
  async findByHash(hash: string): Promise<Pick<ApiKey, 'id' | 'instance_id' | 'key_hash'> | null> {
    const [row] = await rows<Pick<ApiKey, 'id' | 'instance_id' | 'key_hash'>>(
      this.db,
      'SELECT id, instance_id, key_hash FROM api_keys WHERE key_hash = $1',
      [hash],
    );
    return row ?? null;
  }

  async touch(id: string, at: Date): Promise<void> {
    await this.db.query('UPDATE api_keys SET last_used_at = $2 WHERE id = $1', [id, at]);
  }
}
