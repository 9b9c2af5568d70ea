import { DataSource, type DataSourceOptions } from 'typeorm';
import type { AppConfig } from '../src/config/app-config.js';
import { typeOrmOptions } from '../src/database/database.module.js';
import { TestDatabase } from './support/test-app.js';

describe("the service's database sessions", () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await TestDatabase.create();
  });

  afterAll(async () => {
    await db.drop();
  });

  it('are ended by PostgreSQL when left idle inside a transaction (it would hold conversation followers back)', async () => {
    const source = new DataSource(
      typeOrmOptions({ DATABASE_URL: db.url } as AppConfig) as DataSourceOptions,
    );
    await source.initialize();
    const runner = source.createQueryRunner();
    try {
      await runner.startTransaction();
      const [setting] = (await runner.query('SHOW idle_in_transaction_session_timeout')) as Array<
        Record<string, string>
      >;
      expect(setting).toEqual({ idle_in_transaction_session_timeout: '30s' });
      await runner.rollbackTransaction();
    } finally {
      await runner.release();
      await source.destroy();
    }
  });
});
