import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MIGRATIONS } from '../src/database/database.module.js';
import { TestDatabase, freePort, testEnvironment } from './support/test-app.js';

/** The built entry the Kubernetes migration Job runs (`npm test` builds first). */
const MIGRATE = resolve('dist/migrate.js');

/** Runs `node dist/migrate.js` in an empty folder (no .env) with only `env`. */
async function migrate(env: Record<string, string | undefined>): Promise<{
  code: number | null;
  output: string;
}> {
  const cwd = mkdtempSync(join(tmpdir(), 'mc-migrate-'));
  try {
    let output = '';
    const child = spawn(process.execPath, [MIGRATE], {
      cwd,
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    return { code, output };
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
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
      testEnvironment({ DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres` }),
    );
    expect(unreachable.code).toBe(1);
    expect(unreachable.output).toMatch(/^migration failed: .*ECONNREFUSED/m);

    const production = await migrate({ NODE_ENV: 'production', DATABASE_URL: db.url });
    expect(production.code).toBe(1);
    expect(production.output).toContain('JWT_SECRET is required when NODE_ENV=production');
  });
});
