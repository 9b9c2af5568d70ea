import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MIGRATIONS } from '../src/database/migrations/index.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { TestDatabase, freePort, testEnvironment, waitFor } from './support/test-app.js';

/** The built entry the Kubernetes migration Job runs (`npm test` builds first). */
const MIGRATE = resolve('dist/migrate.js');

/** Starts `node dist/migrate.js` in an empty folder (no .env) with only `env`. */
function startMigrate(env: Record<string, string | undefined>): {
  output(): string;
  exited: Promise<{ code: number | null; output: string }>;
} {
  const cwd = mkdtempSync(join(tmpdir(), 'mc-migrate-'));
  let output = '';
  const child = spawn(process.execPath, [MIGRATE], {
    cwd,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit').then(([code]) => {
    rmSync(cwd, { recursive: true, force: true });
    return { code: code as number | null, output };
  });
  return { output: () => output, exited };
}

/** Runs `node dist/migrate.js` to its end. */
function migrate(
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; output: string }> {
  return startMigrate(env).exited;
}

describe('node dist/migrate.js (the migration Job)', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await TestDatabase.create();
  });

  afterAll(async () => {
    await db.drop();
  });

  it('applies every migration and exits 0, even with DB_MIGRATIONS_RUN=false; again, nothing to do', async () => {
    const env = testEnvironment({ DATABASE_URL: db.url, DB_MIGRATIONS_RUN: 'false' });
    const first = await migrate(env);
    expect(first).toEqual({ code: 0, output: expect.stringContaining('the schema is current') });
    const applied = await db.query<{ name: string }>('SELECT name FROM migrations ORDER BY id');
    expect(applied.map((row) => row.name)).toEqual(MIGRATIONS.map((migration) => migration.name));

    const second = await migrate(env);
    expect(second.code).toBe(0);
    expect(await db.query('SELECT name FROM migrations')).toHaveLength(MIGRATIONS.length);
  });

  it('exits 1 with one line when PostgreSQL cannot be reached, and with each configuration problem', async () => {
    const port = await freePort();
    const unreachable = await migrate(
      testEnvironment({
        DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres`,
        MIGRATE_WAIT_S: '0',
      }),
    );
    expect(unreachable.code).toBe(1);
    expect(unreachable.output).toMatch(
      /^migration failed: PostgreSQL is not reachable at 127\.0\.0\.1:\d+ \(ECONNREFUSED\); gave up after MIGRATE_WAIT_S=0$/m,
    );

    const production = await migrate({ NODE_ENV: 'production', DATABASE_URL: db.url });
    expect(production.code).toBe(1);
    expect(production.output).toContain('JWT_SECRET is required when NODE_ENV=production');
  });

  it('started while PostgreSQL is away: waits (one line), migrates once it answers, exits 0', async () => {
    const fresh = await TestDatabase.create();
    const proxy = await TcpProxy.start('127.0.0.1', 5432);
    try {
      proxy.cutOff();
      const job = startMigrate(
        testEnvironment({
          DATABASE_URL: fresh.url.replace('127.0.0.1:5432', `127.0.0.1:${proxy.port}`),
        }),
      );
      let exitedEarly = false;
      void job.exited.then(() => (exitedEarly = true));
      await waitFor(
        () => exitedEarly || job.output().includes('PostgreSQL is not reachable at'),
        30_000,
      );
      expect(exitedEarly).toBe(false);
      expect(job.output()).toMatch(
        new RegExp(
          `^PostgreSQL is not reachable at 127\\.0\\.0\\.1:${proxy.port} \\(.+\\): waiting for it, migrating once it answers$`,
          'm',
        ),
      );
      expect(await fresh.query("SELECT to_regclass('public.migrations') AS t")).toEqual([
        { t: null },
      ]);

      proxy.restore();
      const done = await job.exited;
      expect(done).toEqual({ code: 0, output: expect.stringContaining('the schema is current') });
      const applied = await fresh.query<{ name: string }>(
        'SELECT name FROM migrations ORDER BY id',
      );
      expect(applied.map((row) => row.name)).toEqual(MIGRATIONS.map((migration) => migration.name));
    } finally {
      await proxy.stop();
      await fresh.drop();
    }
  }, 120_000);
});
