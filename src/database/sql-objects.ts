/**
 * The current definition of a database function or trigger. Each lives in a
 * `*.sql.ts` file beside the store of the table it belongs to; `src/schema.ts`
 * lists them all, `npm run sql:migration` writes a migration from the
 * difference to the migrated schema, and the database tests check that a
 * migrated database holds exactly these.
 *
 * A name is one function: overloads (two functions of one name) are refused.
 * That is what lets the migration find the function a definition replaces by
 * its name alone, and drop it first (with the triggers that use it) when
 * PostgreSQL cannot replace it in place because its return type or parameter
 * names change; a function whose argument types change is created beside the
 * old one, which is then dropped as no longer defined.
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
