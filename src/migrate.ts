import 'reflect-metadata';
import { loadConfigOrExit } from './config/load-config.js';
import { MigrationRunner } from './database/database.module.js';

/**
 * `node dist/migrate.js`: applies pending migrations (the same runner, under the
 * same advisory lock, as a process started with DB_MIGRATIONS_RUN) and exits, 0
 * once the schema is current. The Kubernetes migration Job runs it before a
 * rollout, so the Deployments can start with DB_MIGRATIONS_RUN=false.
 */
async function migrate(): Promise<void> {
  const { config } = loadConfigOrExit();
  config.DB_MIGRATIONS_RUN = true;
  await new MigrationRunner(config).onModuleInit();
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
