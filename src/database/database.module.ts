import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger, Module, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource, TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions, type QueryRunner } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { MIGRATIONS } from './migrations/index.js';

/**
 * A session of the service left idle inside a transaction (a bug, a stalled
 * process) is ended by PostgreSQL after this long: while it is open it holds
 * every conversation follower back (MessageStore.readConversation's horizon)
 * and keeps its locks. The service's transactions run SQL only, with no pause
 * between statements, so this is far above any gap of theirs.
 */
export const IDLE_IN_TRANSACTION_TIMEOUT_MS = 30_000;

/** Any constant: every process that migrates takes the same PostgreSQL advisory lock. */
const MIGRATION_LOCK_ID = 7_250_113_001;
/** How often a process waiting for another's migrations tries the lock, and says it waits. */
const LOCK_RETRY_MS = 500;
const LOCK_REPORT_INTERVAL_MS = 30_000;

export function typeOrmOptions(config: AppConfig): TypeOrmModuleOptions {
  return {
    type: 'postgres',
    url: config.DATABASE_URL,
    // No entities: each table's SQL lives in its store, with typed rows.
    entities: [],
    migrations: MIGRATIONS,
    migrationsRun: false,
    synchronize: false,
    logging: false,
    // Connected in app.init() (DatabaseConnection below), not while Nest builds
    // the providers: a failure there leaves an app that can be closed, so the
    // Redis clients and queues built meanwhile are closed too, and the process
    // waits for PostgreSQL and boots again (src/server.ts) instead of retrying here.
    manualInitialization: true,
    retryAttempts: 0,
    toRetry: () => false,
    // Bounded, so a request answers 503 within 5 s when PostgreSQL is away or
    // hangs (a connection that never answers would otherwise wait for TCP).
    extra: {
      max: 20,
      connectionTimeoutMillis: 2000,
      query_timeout: 3000,
      idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
    },
  };
}

/**
 * Applies pending migrations at boot (DB_MIGRATIONS_RUN) under an advisory
 * lock, so several processes starting together migrate once.
 */
@Injectable()
export class MigrationRunner implements OnModuleInit {
  private readonly logger = new Logger('Migrations');

  constructor(private readonly config: AppConfig) {}

  async onModuleInit(): Promise<void> {
    if (!this.config.DB_MIGRATIONS_RUN) return;
    // Its own connection, without the request path's query timeout: a migration may take long.
    const migrations = new DataSource({
      ...(typeOrmOptions(this.config) as DataSourceOptions),
      // Two: one holds the advisory lock while the other migrates.
      extra: {
        max: 2,
        connectionTimeoutMillis: 5000,
        idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
      },
    });
    await migrations.initialize();
    const lock = migrations.createQueryRunner();
    try {
      await lock.connect();
      await this.takeLock(lock);
      // A transaction each, not one for all: a migration that builds an index
      // concurrently cannot run in one, and a table lock one migration takes is
      // not held while the next runs. Each migration is recorded as applied with
      // its changes, so a run that fails resumes at the failed one.
      const applied = await migrations.runMigrations({ transaction: 'each' });
      if (applied.length > 0) {
        this.logger.log(`applied ${applied.map((m) => m.name).join(', ')}`);
      }
    } finally {
      await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
      await lock.release();
      await migrations.destroy();
    }
  }

  /**
   * Waits for the migration lock by trying it, not by blocking in
   * pg_advisory_lock: a session waiting inside that statement holds a snapshot,
   * and the holder's CREATE INDEX CONCURRENTLY waits for every older snapshot
   * to end, so the two would wait on each other forever. Between tries this
   * session holds nothing.
   */
  private async takeLock(lock: QueryRunner): Promise<void> {
    let reported = 0;
    for (;;) {
      const [row] = (await lock.query('SELECT pg_try_advisory_lock($1) AS locked', [
        MIGRATION_LOCK_ID,
      ])) as Array<{ locked: boolean }>;
      if (row.locked) return;
      if (Date.now() - reported >= LOCK_REPORT_INTERVAL_MS) {
        reported = Date.now();
        this.logger.log('waiting for another process to finish its migrations');
      }
      await sleep(LOCK_RETRY_MS);
    }
  }
}

/** Connects the app's DataSource at init (see manualInitialization above). */
@Injectable()
export class DatabaseConnection implements OnModuleInit {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async onModuleInit(): Promise<void> {
    if (!this.dataSource.isInitialized) await this.dataSource.initialize();
  }
}

@Module({
  imports: [TypeOrmModule.forRootAsync({ inject: [AppConfig], useFactory: typeOrmOptions })],
  providers: [DatabaseConnection, MigrationRunner],
})
export class DatabaseModule {}
