import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { rows } from '../database/sql.js';
import { LIVE_CHANNEL } from './live.functions.sql.js';

/** A notification of mc_live_notify: rows of one instance that changed. */
export interface LiveNotice {
  kind: 'message' | 'contact';
  instanceId: string;
  ids: string[];
}

/** A connection that listens on LIVE_CHANNEL until closed. */
export interface LiveListening {
  close(): Promise<void>;
}

/** How long a listening connection waits before it connects again after losing PostgreSQL. */
const RECONNECT_DELAYS_MS = [100, 500, 1000, 2000, 5000];
/** How often the wait for older transactions (`waitForOlderTransactions`) looks again. */
const HORIZON_POLL_MS = 20;

function parseNotice(payload: string | undefined): LiveNotice | null {
  try {
    const notice = JSON.parse(payload ?? '') as { k?: unknown; i?: unknown; ids?: unknown };
    if (
      (notice.k === 'message' || notice.k === 'contact') &&
      typeof notice.i === 'string' &&
      Array.isArray(notice.ids)
    ) {
      return { kind: notice.k, instanceId: notice.i, ids: notice.ids.map(String) };
    }
  } catch {
    // not one of ours
  }
  return null;
}

/**
 * The `live_listeners` table (which process streams which instances) and the
 * connection each api process listens for the triggers' notifications on.
 */
@Injectable()
export class LiveStore {
  private readonly logger = new Logger(LiveStore.name);

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly config: AppConfig,
  ) {}

  /**
   * Says that `processId` streams `instanceIds` for `ttlSeconds` more, and
   * nothing else: its other rows go. Answers the database's time once the
   * rows are committed (see waitForOlderTransactions).
   */
  async renew(processId: string, instanceIds: string[], ttlSeconds: number): Promise<Date> {
    await this.db.transaction(async (tx) => {
      // This process's rows it no longer needs, and those of processes that died a while ago.
      await tx.query(
        `DELETE FROM live_listeners
         WHERE (process_id = $1 AND NOT instance_id = ANY($2::uuid[]))
            OR expires_at < now() - interval '1 minute'`,
        [processId, instanceIds],
      );
      // An instance deleted meanwhile has no row to refer to: it is left out.
      await tx.query(
        `INSERT INTO live_listeners (instance_id, process_id, expires_at)
         SELECT i.id, $1, now() + $3::float8 * interval '1 second'
         FROM instances i WHERE i.id = ANY($2::uuid[])
         ON CONFLICT (instance_id, process_id) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
        [processId, instanceIds, ttlSeconds],
      );
    });
    const [{ at }] = await rows<{ at: Date }>(this.db, 'SELECT clock_timestamp() AS at');
    return at;
  }

  /** Forgets a process's rows (it stops streaming). */
  async release(processId: string): Promise<void> {
    await this.db.query('DELETE FROM live_listeners WHERE process_id = $1', [processId]);
  }

  /**
   * Resolves once every transaction of this database that began before
   * `since` has ended, or after `maxMs` (false). A transaction that began
   * before a listener's row was committed may have looked for it and not
   * seen it: what it writes is notified to no one. Once all such transactions
   * are over, a read sees what they wrote, and everything later is notified.
   * A session whose activity this role may not see is not waited for.
   */
  async waitForOlderTransactions(
    since: Date,
    maxMs: number,
    signal?: AbortSignal,
  ): Promise<boolean> {
    const deadline = Date.now() + maxMs;
    for (;;) {
      signal?.throwIfAborted();
      const [{ older }] = await rows<{ older: boolean }>(
        this.db,
        `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
                        WHERE datname = current_database() AND pid <> pg_backend_pid()
                          AND xact_start < $1) AS older`,
        [since],
      );
      if (!older) return true;
      if (Date.now() > deadline) return false;
      await sleep(HORIZON_POLL_MS, undefined, { signal });
    }
  }

  /**
   * Listens on a connection of its own (a pool's would be handed to other
   * queries). `onConnected` runs each time it is listening anew: the
   * notifications between a loss and then were missed. Connects again after
   * a loss, until closed.
   */
  listen(onNotice: (notice: LiveNotice) => void, onConnected: () => void): LiveListening {
    let closed = false;
    const stop = new AbortController();
    let client: pg.Client | null = null;
    let failures = 0;
    const connect = async (): Promise<void> => {
      while (!closed) {
        const candidate = new pg.Client({
          connectionString: this.config.DATABASE_URL,
          connectionTimeoutMillis: 2000,
          keepAlive: true,
        });
        try {
          const lost = new Promise<void>((resolve) => {
            candidate.on('error', () => resolve());
            candidate.on('end', () => resolve());
          });
          candidate.on('notification', (message) => {
            if (message.channel !== LIVE_CHANNEL) return;
            const notice = parseNotice(message.payload);
            if (notice) onNotice(notice);
          });
          await candidate.connect();
          await candidate.query(`LISTEN ${LIVE_CHANNEL}`);
          client = candidate;
          failures = 0;
          if (closed) break;
          onConnected();
          await lost;
          client = null;
          if (!closed)
            this.logger.warn('the live notifications connection was lost: connecting again');
        } catch (error) {
          this.logger.warn(
            { err: (error as Error).message },
            'the live notifications connection failed: trying again',
          );
        }
        await candidate.end().catch(() => undefined);
        if (closed) break;
        const delay = RECONNECT_DELAYS_MS[Math.min(failures++, RECONNECT_DELAYS_MS.length - 1)];
        await sleep(delay, undefined, { signal: stop.signal }).catch(() => undefined);
      }
    };
    const running = connect();
    return {
      close: async () => {
        closed = true;
        stop.abort();
        // Bounded: a connection that does not answer its end is not waited for.
        const ended = client?.end().catch(() => undefined);
        await Promise.race([Promise.all([ended, running]), sleep(2000)]);
      },
    };
  }
}
