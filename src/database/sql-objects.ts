/**
 * The current definition of a database function or trigger. Each lives in a
 * `*.sql.ts` file beside the store of the table it belongs to; `src/schema.ts`
 * lists them all, `npm run sql:migration` writes a migration from the
 * difference to the migrated schema, and the database tests check that a
 * migrated database holds exactly these.
 */
export type SqlObject =
  | { kind: 'function'; name: string; sql: string }
  | { kind: 'trigger'; name: string; table: string; sql: string };

/** `CREATE OR REPLACE FUNCTION name(...) ...`: the whole statement. */
export function sqlFunction(name: string, sql: string): SqlObject {
  return { kind: 'function', name, sql: sql.trim() };
}

/** `CREATE TRIGGER name ... ON table ...`: the whole statement. */
export function sqlTrigger(name: string, table: string, sql: string): SqlObject {
  return { kind: 'trigger', name, table, sql: sql.trim() };
}
