import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { rows } from '../database/sql.js';

/** A chunk of history as the platform numbers it. */
export interface HistoryChunk {
  phase: number;
  chunkOrder: number;
  progress: number;
  /** Messages the chunk held, and those stored now (new to the service). */
  messages: number;
  stored: number;
}

/** What an instance's history import came to. */
export interface HistorySummary {
  chunks: number;
  /** The messages of the chunks recorded. */
  messages: number;
  /** The furthest phase the platform reported (0: day 0-1, 1: day 1-90, 2: day 90-180), and its progress. */
  phase: number | null;
  progress: number | null;
}

/** The only home of SQL on `history_chunks`. */
@Injectable()
export class HistoryStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Imports a chunk once: in one transaction, one import of the same chunk at
   * a time (a re-delivery racing the first waits for it, then finds it
   * recorded), `store` writes its messages and the chunk is recorded with
   * how many were new (its trigger writes the event). What was stored, or
   * null when the chunk was imported before.
   */
  async importChunk(
    instanceId: string,
    chunk: Omit<HistoryChunk, 'stored'>,
    store: (manager: EntityManager) => Promise<number>,
  ): Promise<number | null> {
    return this.db.transaction(async (manager) => {
      // Before any row (database/lock-order.ts, level 0): only imports of this chunk take it.
      await manager.query(
        `SELECT pg_advisory_xact_lock(hashtextextended('mc-history:' || $1 || ':' || $2 || ':' || $3, 0))`,
        [instanceId, chunk.phase, chunk.chunkOrder],
      );
      const known = await rows<{ phase: number }>(
        manager,
        `SELECT phase FROM history_chunks WHERE instance_id = $1 AND phase = $2 AND chunk_order = $3`,
        [instanceId, chunk.phase, chunk.chunkOrder],
      );
      if (known.length > 0) return null;
      const stored = await store(manager);
      await manager.query(
        `INSERT INTO history_chunks (instance_id, phase, chunk_order, progress, messages, stored)
         VALUES ($1, $2, $3, $4, $5, $6)`,
        [instanceId, chunk.phase, chunk.chunkOrder, chunk.progress, chunk.messages, stored],
      );
      return stored;
    });
  }

  async summary(instanceId: string): Promise<HistorySummary> {
    const [found] = await rows<HistorySummary>(
      this.db,
      // A chunk is recorded once: its messages count once.
      `SELECT count(*)::int AS chunks, COALESCE(sum(messages), 0)::int AS messages,
         max(phase) AS phase,
         (SELECT max(progress) FROM history_chunks l
          WHERE l.instance_id = $1
            AND l.phase = (SELECT max(phase) FROM history_chunks m WHERE m.instance_id = $1))
           AS progress
       FROM history_chunks WHERE instance_id = $1`,
      [instanceId],
    );
    return found;
  }
}
