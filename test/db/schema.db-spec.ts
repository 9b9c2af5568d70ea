import { diffSchema } from '../../src/database/schema-diff.js';
import { SCHEMA_SQL } from '../../src/schema.js';
import { useMigratedDatabase } from './support.js';

describe('current-state SQL (src/schema.ts)', () => {
  const context = useMigratedDatabase();

  it('is what the migrations leave: every mc_* function and every trigger, to the letter', async () => {
    const diff = await diffSchema(await context.client(), SCHEMA_SQL);
    // A change here wants a migration: npm run sql:migration -- <Name>
    expect(diff.changes).toEqual([]);
  });

  it('names each function and trigger by the name its SQL creates', () => {
    for (const object of SCHEMA_SQL) {
      const created =
        object.kind === 'function'
          ? /^CREATE OR REPLACE FUNCTION (\w+)\(/.exec(object.sql)
          : /^CREATE TRIGGER (\w+)\s.*?\sON (\w+)\s/s.exec(object.sql);
      expect([object.kind, created?.[1]]).toEqual([object.kind, object.name]);
      if (object.kind === 'trigger') expect(created?.[2]).toBe(object.table);
    }
  });
});
