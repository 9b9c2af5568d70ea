import 'reflect-metadata';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDependencyUnavailable } from './common/unavailable.js';
import { loadConfigOrExit } from './config/load-config.js';
import { MigrationRunner } from './database/database.module.js';
import { dependenciesOf } from './startup/dependency-checks.js';

/** How often PostgreSQL is checked again while it does not answer. */
const CHECK_INTERVAL_MS = 1000;

/** How often the waiting line is repeated. */
const REPORT_INTERVAL_MS = 5000;

/**
 * `node dist/migrate.js`: applies pending migrations (the same runner, under the
 * same advisory lock, as a process started with DB_MIGRATIONS_RUN) and exits, 0
 * once the schema is current. The Kubernetes migration Job runs it before a
 * rollout, so the Deployments can start with DB_MIGRATIONS_RUN=false. While
 * PostgreSQL does not answer (at start, or after it went away mid-migration,
 * whose transaction then rolled back) it waits, up to MIGRATE_WAIT_S, rather
 * than spending the Job's few retries.
 */
async function migrate(): Promise<void> {
  const { config } = loadConfigOrExit();
  config.DB_MIGRATIONS_RUN = true;
  const postgres = dependenciesOf(config).find((dependency) => dependency.key === 'database')!;
  const deadline = Date.now() + config.MIGRATE_WAIT_S * 1000;
  let reported = 0;
  for (;;) {
    const problem = await postgres.check();
    if (problem === null) {
      try {
        await new MigrationRunner(config).onModuleInit();
        break;
      } catch (error) {
        if (!isDependencyUnavailable(error) || Date.now() >= deadline) throw error;
        process.stdout.write(
          `PostgreSQL stopped answering during the migrations (${postgres.address}): waiting for it, then migrating again\n`,
        );
        reported = Date.now();
      }
    } else {
      const line = `PostgreSQL is not reachable at ${postgres.address} (${problem})`;
      if (Date.now() >= deadline) {
        throw new Error(`${line}; gave up after MIGRATE_WAIT_S=${config.MIGRATE_WAIT_S}`);
      }
      if (Date.now() - reported >= REPORT_INTERVAL_MS) {
        process.stdout.write(`${line}: waiting for it, migrating once it answers\n`);
        reported = Date.now();
      }
    }
    await sleep(CHECK_INTERVAL_MS);
  }
  process.stdout.write('migrations: the schema is current\n');
}

/** Sets the exit code and lets stdout drain; exits anyway after a second if a handle lingers. */
function finish(code: number): void {
  process.exitCode = code;
  setTimeout(() => process.exit(code), 1000).unref();
}

migrate().then(
  () => finish(0),
  (error: unknown) => {
    process.stderr.write(
      `migration failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    finish(1);
  },
);
