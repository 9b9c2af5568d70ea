import { readdirSync, readFileSync } from 'node:fs';
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

  it('has a describe, by name, for every SQL function and every store in the database tier', () => {
    const read = (dir: URL, suffix: string) =>
      readdirSync(dir, { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith(suffix))
        .map((file) => readFileSync(new URL(file, dir), 'utf8'));
    const specs = read(new URL('./', import.meta.url), '.db-spec.ts').join('\n');
    const stores = read(new URL('../../src/', import.meta.url), '.store.ts').flatMap((text) =>
      [...text.matchAll(/export class (\w+Store)\b/g)].map((m) => m[1]),
    );
    const functions = SCHEMA_SQL.filter((o) => o.kind === 'function').map((o) => o.name);
    expect(stores.length).toBeGreaterThanOrEqual(7);
    const missing = [...stores, ...functions].filter(
      (name) => !specs.includes(`describe('${name}'`),
    );
    expect(missing).toEqual([]);
  });
});
