import type { ClientBase } from 'pg';
import type { SqlObject } from './sql-objects.js';

/** What it takes to bring a database's functions and triggers to the current definitions. */
export interface SchemaDiff {
  /** In order: the statements that apply the current definitions. */
  up: string[];
  /** In order: the statements that put back what `up` replaced. */
  down: string[];
  /** One line per function or trigger added, changed or dropped. */
  changes: string[];
}

interface FunctionRow {
  oid: number;
  name: string;
  args: string;
  def: string;
  touched: boolean;
}

interface TriggerRow {
  name: string;
  tbl: string;
  def: string;
}

const FUNCTIONS = `
  SELECT p.oid, p.proname AS name, pg_get_function_identity_arguments(p.oid) AS args,
    pg_get_functiondef(p.oid) AS def, p.xmin = xid(pg_current_xact_id()) AS touched
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
  WHERE n.nspname = current_schema() AND p.proname LIKE 'mc\\_%'`;

const TRIGGERS = `
  SELECT t.tgname AS name, c.relname AS tbl, pg_get_triggerdef(t.oid) AS def
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = current_schema() AND NOT t.tgisinternal`;

/** Function bodies may name functions defined later in the list (pg_dump does the same). */
const DEFERRED_BODY_CHECKS = 'SET LOCAL check_function_bodies = off';

/**
 * Dropping or creating a trigger locks its table: queued behind a long
 * transaction, the migration would hold every query on it back, so it waits
 * at most this long, then rolls back and runs again at the next start.
 */
const TABLE_LOCK_WAIT = "SET LOCAL lock_timeout = '5s'";

/**
 * Compares the functions (`mc_*`) and triggers of `client`'s database with
 * `objects`, by applying them in a transaction that is rolled back and
 * reading both versions back as PostgreSQL prints them, so spacing in a file
 * counts only where PostgreSQL keeps it (a function's body, verbatim). A
 * function or trigger of the database that `objects` does not define is
 * dropped. The client must not be in a transaction.
 */
export async function diffSchema(client: ClientBase, objects: SqlObject[]): Promise<SchemaDiff> {
  const names = objects.map((o) => `${o.kind} ${o.name}`);
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice) throw new Error(`${twice} is defined twice`);

  await client.query('BEGIN');
  try {
    await client.query(DEFERRED_BODY_CHECKS);
    const before = {
      functions: (await client.query<FunctionRow>(FUNCTIONS)).rows,
      triggers: (await client.query<TriggerRow>(TRIGGERS)).rows,
    };
    const triggers = objects.filter((o) => o.kind === 'trigger');
    for (const trigger of triggers) {
      await client.query(`DROP TRIGGER IF EXISTS ${trigger.name} ON ${trigger.table}`);
    }
    const sqlOf = new Map<number, string>();
    for (const fn of objects.filter((o) => o.kind === 'function')) {
      await run(client, fn);
      const made = await client.query<{ oid: number }>(
        `SELECT oid FROM pg_proc WHERE proname = $1 AND xmin = xid(pg_current_xact_id())`,
        [fn.name],
      );
      if (made.rows.length !== 1)
        throw new Error(`function ${fn.name}: its SQL does not define it`);
      sqlOf.set(made.rows[0].oid, fn.sql);
    }
    for (const trigger of triggers) await run(client, trigger);
    const after = {
      functions: (await client.query<FunctionRow>(FUNCTIONS)).rows,
      triggers: (await client.query<TriggerRow>(TRIGGERS)).rows,
    };
    return plan(before, after, objects, sqlOf);
  } finally {
    await client.query('ROLLBACK');
  }
}

async function run(client: ClientBase, object: SqlObject): Promise<void> {
  try {
    await client.query(object.sql);
  } catch (error) {
    throw new Error(`${object.kind} ${object.name}: ${(error as Error).message}`, { cause: error });
  }
}

function plan(
  before: { functions: FunctionRow[]; triggers: TriggerRow[] },
  after: { functions: FunctionRow[]; triggers: TriggerRow[] },
  objects: SqlObject[],
  sqlOf: Map<number, string>,
): SchemaDiff {
  const signature = (f: FunctionRow) => `${f.name}(${f.args})`;
  const oldFunctions = new Map(before.functions.map((f) => [signature(f), f]));
  const oldTriggers = new Map(before.triggers.map((t) => [`${t.tbl}.${t.name}`, t]));
  const newTriggers = new Map(after.triggers.map((t) => [`${t.tbl}.${t.name}`, t]));

  const changes: string[] = [];
  const up = { dropTriggers: [] as string[], functions: [] as string[], triggers: [] as string[] };
  const down = {
    dropTriggers: [] as string[],
    functions: [] as string[],
    triggers: [] as string[],
  };
  const dropFunctions: string[] = [];
  const undropFunctions: string[] = [];

  for (const fn of after.functions.filter((f) => f.touched)) {
    const old = oldFunctions.get(signature(fn));
    if (old?.def === fn.def) continue;
    changes.push(`function ${signature(fn)}: ${old ? 'changed' : 'added'}`);
    up.functions.push(sqlOf.get(fn.oid)!);
    down.functions.push(old ? old.def : `DROP FUNCTION ${signature(fn)}`);
  }
  for (const fn of after.functions.filter((f) => !f.touched)) {
    changes.push(`function ${signature(fn)}: dropped`);
    dropFunctions.push(`DROP FUNCTION ${signature(fn)}`);
    undropFunctions.push(fn.def);
  }
  for (const trigger of objects.filter((o) => o.kind === 'trigger')) {
    const key = `${trigger.table}.${trigger.name}`;
    const old = oldTriggers.get(key);
    if (old?.def === newTriggers.get(key)?.def) continue;
    changes.push(`trigger ${trigger.name} on ${trigger.table}: ${old ? 'changed' : 'added'}`);
    up.dropTriggers.push(`DROP TRIGGER IF EXISTS ${trigger.name} ON ${trigger.table}`);
    up.triggers.push(trigger.sql);
    down.dropTriggers.push(`DROP TRIGGER IF EXISTS ${trigger.name} ON ${trigger.table}`);
    if (old) down.triggers.push(old.def);
  }
  const defined = new Set(
    objects.flatMap((o) => (o.kind === 'trigger' ? [`${o.table}.${o.name}`] : [])),
  );
  for (const [key, old] of oldTriggers) {
    if (defined.has(key)) continue;
    changes.push(`trigger ${old.name} on ${old.tbl}: dropped`);
    up.dropTriggers.push(`DROP TRIGGER ${old.name} ON ${old.tbl}`);
    down.triggers.push(old.def);
  }
  if (changes.length === 0) return { up: [], down: [], changes };
  return {
    // Triggers go first and come back last: a function they use may be replaced or dropped.
    up: [
      DEFERRED_BODY_CHECKS,
      TABLE_LOCK_WAIT,
      ...up.dropTriggers,
      ...up.functions,
      ...up.triggers,
      ...dropFunctions,
    ],
    down: [
      DEFERRED_BODY_CHECKS,
      TABLE_LOCK_WAIT,
      ...down.dropTriggers,
      ...undropFunctions,
      ...down.functions,
      ...down.triggers,
    ],
    changes,
  };
}
