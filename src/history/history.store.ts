import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
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

  /** Records a chunk; false when it was recorded before (a re-delivery). Its trigger writes the event. */
  async record(instanceId: string, chunk: HistoryChunk): Promise<boolean> {
    const inserted = await rows<{ phase: number }>(
      this.db,
      `INSERT INTO history_chunks (instance_id, phase, chunk_order, progress, messages, stored)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT DO NOTHING RETURNING phase`,
      [instanceId, chunk.phase, chunk.chunkOrder, chunk.progress, chunk.messages, chunk.stored],
    );
    return inserted.length > 0;
  }

  async summary(instanceId: string): Promise<HistorySummary> {
    const [found] = await rows<HistorySummary>(
      this.db,
      // A chunk is recorded once: its messages count once (its `stored` may be 0 when a
      // re-delivery raced the first and stored nothing new).
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
