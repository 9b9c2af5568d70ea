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
  /** The name as a statement writes it (quote_ident). */
  quoted: string;
  args: string;
  /** Its CREATE OR REPLACE statement, unqualified: see `readSchema`. */
  def: string;
}

interface TriggerRow {
  name: string;
  tbl: string;
  /** `name ON table`, each quoted as a statement writes it. */
  target: string;
  def: string;
  /** The functions it uses (its own and any its WHEN calls), from pg_depend. */
  uses: number[];
}

interface SchemaState {
  functions: FunctionRow[];
  triggers: TriggerRow[];
}

const FUNCTIONS = `
  SELECT p.oid, p.proname AS name, quote_ident(p.proname) AS quoted,
    pg_get_function_identity_arguments(p.oid) AS args, pg_get_functiondef(p.oid) AS def,
    quote_ident(n.nspname) AS schema
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
  WHERE n.nspname = current_schema() AND p.proname LIKE 'mc\\_%'
  ORDER BY p.proname, args`;

// Pretty-printed, a trigger names its table without the schema when the search path
// finds it (as it finds every table here), so a `down` that restores it lands where
// the app's tables are.
const TRIGGERS = `
  SELECT t.tgname AS name, c.relname AS tbl,
    quote_ident(t.tgname) || ' ON ' || quote_ident(c.relname) AS target,
    pg_get_triggerdef(t.oid, true) AS def,
    ARRAY(SELECT d.refobjid FROM pg_depend d
          WHERE d.classid = 'pg_trigger'::regclass AND d.objid = t.oid
            AND d.refclassid = 'pg_proc'::regclass) AS uses
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = current_schema() AND NOT t.tgisinternal
  ORDER BY c.relname, t.tgname`;

/** The same-named functions of the current schema, each row version by its xmin. */
const SAME_NAME = `
  SELECT p.oid, p.xmin::text AS version FROM pg_proc p
  WHERE p.pronamespace = current_schema()::regnamespace AND p.proname = $1`;

/**
 * What CREATE OR REPLACE FUNCTION answers when a function's return type or
 * parameter names (or defaults) change: invalid_function_definition, and
 * invalid_table_definition, which some versions use for a changed row type.
 * Such a function is dropped and created again.
 */
const NEEDS_DROP = new Set(['42P13', '42P16']);

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
 * dropped; one whose return type or parameter names change is dropped before
 * it is created again, and the triggers that use it with it. The client must
 * not be in a transaction.
 */
export async function diffSchema(client: ClientBase, objects: SqlObject[]): Promise<SchemaDiff> {
  const names = objects.map((o) => `${o.kind} ${o.name}`);
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice) throw new Error(`${twice} is defined twice (a name is one function: no overloads)`);

  await client.query('BEGIN');
  try {
    return await compare(client, objects);
  } finally {
    await client.query('ROLLBACK');
  }
}

/**
 * Runs `diff` the way the migration will, in a transaction that is rolled
 * back: `up`, after which the database must equal `objects`, then `down`,
 * after which its functions and triggers must be what they were. Throws,
 * naming the statement or the difference, when either fails; so a plan that
 * drops a function something still uses, or a `down` in the wrong order, is
 * found before the migration is written. The client must not be in a
 * transaction.
 */
export async function verifyPlan(
  client: ClientBase,
  objects: SqlObject[],
  diff: SchemaDiff,
): Promise<void> {
  await client.query('BEGIN');
  try {
    const start = await readSchema(client);
    await runAll(client, 'up', diff.up);
    const left = await compare(client, objects);
    if (left.changes.length > 0) {
      throw new Error(`after up, the database still differs:\n  ${left.changes.join('\n  ')}`);
    }
    await runAll(client, 'down', diff.down);
    const lost = stateChanges(start, await readSchema(client));
    if (lost.length > 0) throw new Error(`down does not restore:\n  ${lost.join('\n  ')}`);
  } finally {
    await client.query('ROLLBACK');
  }
}

/** `diffSchema` inside the caller's transaction, under a savepoint that is rolled back. */
async function compare(client: ClientBase, objects: SqlObject[]): Promise<SchemaDiff> {
  await client.query('SAVEPOINT mc_schema_diff');
  try {
    await client.query(DEFERRED_BODY_CHECKS);
    const before = await readSchema(client);
    const triggers = objects.filter((o) => o.kind === 'trigger');
    for (const trigger of triggers) {
      const { rows } = await client.query<{ target: string }>(
        `SELECT quote_ident($1) || ' ON ' || quote_ident($2) AS target`,
        [trigger.name, trigger.table],
      );
      await client.query(`DROP TRIGGER IF EXISTS ${rows[0].target}`);
    }
    const sqlOf = new Map<number, string>();
    const replaced = new Map<string, FunctionRow[]>();
    for (const fn of objects.filter((o) => o.kind === 'function')) {
      const versions = new Set(
        (await client.query<{ oid: number; version: string }>(SAME_NAME, [fn.name])).rows.map(
          (r) => `${r.oid}:${r.version}`,
        ),
      );
      const dropped = await createFunction(client, fn, before);
      if (dropped.length > 0) replaced.set(fn.name, dropped);
      // The row this statement wrote: a new one, or a new version of the one it replaced.
      const made = (
        await client.query<{ oid: number; version: string }>(SAME_NAME, [fn.name])
      ).rows.filter((r) => !versions.has(`${r.oid}:${r.version}`));
      if (made.length !== 1) throw new Error(`function ${fn.name}: its SQL does not define it`);
      sqlOf.set(made[0].oid, fn.sql);
    }
    for (const trigger of triggers) await run(client, trigger);
    return plan(before, await readSchema(client), objects, sqlOf, replaced);
  } finally {
    await client.query('ROLLBACK TO SAVEPOINT mc_schema_diff');
    await client.query('RELEASE SAVEPOINT mc_schema_diff');
  }
}

/**
 * Creates or replaces `fn`; when PostgreSQL refuses to replace it (its return
 * type or parameter names change), drops the functions of that name first,
 * with the triggers that use them, and answers those functions.
 */
async function createFunction(
  client: ClientBase,
  fn: SqlObject,
  before: SchemaState,
): Promise<FunctionRow[]> {
  await client.query('SAVEPOINT mc_schema_function');
  try {
    await client.query(fn.sql);
    await client.query('RELEASE SAVEPOINT mc_schema_function');
    return [];
  } catch (error) {
    await client.query('ROLLBACK TO SAVEPOINT mc_schema_function');
    await client.query('RELEASE SAVEPOINT mc_schema_function');
    const olds = before.functions.filter((f) => f.name === fn.name);
    if (!NEEDS_DROP.has((error as { code?: string }).code ?? '') || olds.length === 0) {
      throw failed(fn, error);
    }
    for (const old of olds) {
      // The triggers `objects` define are gone already; the others are dropped by the plan.
      for (const trigger of before.triggers.filter((t) => t.uses.includes(old.oid))) {
        await client.query(`DROP TRIGGER IF EXISTS ${trigger.target}`);
      }
      try {
        await client.query(`DROP FUNCTION ${signature(old, true)}`);
      } catch (dropError) {
        const why = (dropError as Error).message;
        throw new Error(
          `function ${fn.name}: ${(error as Error).message}, and ${signature(old)} cannot be dropped first: ${why}`,
          { cause: dropError },
        );
      }
    }
    await run(client, fn);
    return olds;
  }
}

async function run(client: ClientBase, object: SqlObject): Promise<void> {
  try {
    await client.query(object.sql);
  } catch (error) {
    throw failed(object, error);
  }
}

function failed(object: SqlObject, error: unknown): Error {
  return new Error(`${object.kind} ${object.name}: ${(error as Error).message}`, { cause: error });
}

async function runAll(client: ClientBase, direction: string, statements: string[]): Promise<void> {
  for (const [i, statement] of statements.entries()) {
    try {
      await client.query(statement);
    } catch (error) {
      const head = statement.split('\n')[0].slice(0, 120);
      throw new Error(`${direction} statement ${i + 1} (${head}): ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
}

/**
 * The `mc_*` functions and the triggers of the current schema. pg_get_functiondef
 * names a function with its schema (`public.mc_x`); that prefix is taken off, so a
 * `down` that restores the function puts it, like every statement of `up`, in the
 * schema the migration runs in (the app's current_schema), whatever it is called.
 */
async function readSchema(client: ClientBase): Promise<SchemaState> {
  const functions = (await client.query<FunctionRow & { schema: string }>(FUNCTIONS)).rows.map(
    ({ schema, ...f }) => {
      const qualified = `CREATE OR REPLACE FUNCTION ${schema}.`;
      if (!f.def.startsWith(qualified)) return f;
      return { ...f, def: `CREATE OR REPLACE FUNCTION ${f.def.slice(qualified.length)}` };
    },
  );
  return { functions, triggers: (await client.query<TriggerRow>(TRIGGERS)).rows };
}

/** `name(args)`, quoted for a statement or as read. */
function signature(f: FunctionRow, quoted = false): string {
  return `${quoted ? f.quoted : f.name}(${f.args})`;
}

/** What differs between two readings, one line each. */
function stateChanges(start: SchemaState, end: SchemaState): string[] {
  const lines: string[] = [];
  const compareMaps = (kind: string, a: Map<string, string>, b: Map<string, string>) => {
    for (const [key, def] of a) {
      if (!b.has(key)) lines.push(`${kind} ${key}: missing`);
      else if (b.get(key) !== def) lines.push(`${kind} ${key}: not as it was`);
    }
    for (const key of b.keys()) if (!a.has(key)) lines.push(`${kind} ${key}: left over`);
  };
  const functions = (s: SchemaState) => new Map(s.functions.map((f) => [signature(f), f.def]));
  const triggers = (s: SchemaState) =>
    new Map(s.triggers.map((t) => [`${t.name} on ${t.tbl}`, t.def]));
  compareMaps('function', functions(start), functions(end));
  compareMaps('trigger', triggers(start), triggers(end));
  return lines;
}

function plan(
  before: SchemaState,
  after: SchemaState,
  objects: SqlObject[],
  sqlOf: Map<number, string>,
  replaced: Map<string, FunctionRow[]>,
): SchemaDiff {
  const oldFunctions = new Map(before.functions.map((f) => [signature(f), f]));
  const oldTriggers = new Map(before.triggers.map((t) => [`${t.tbl}.${t.name}`, t]));
  const newTriggers = new Map(after.triggers.map((t) => [`${t.tbl}.${t.name}`, t]));
  const droppedFirst = new Set([...replaced.values()].flat().map((f) => f.oid));

  const changes: string[] = [];
  const up = { dropTriggers: [] as string[], functions: [] as string[], triggers: [] as string[] };
  const down = {
    dropTriggers: [] as string[],
    functions: [] as string[],
    triggers: [] as string[],
  };
  const dropFunctions: string[] = [];
  const undropFunctions: string[] = [];

  for (const fn of after.functions.filter((f) => sqlOf.has(f.oid))) {
    const olds = replaced.get(fn.name);
    if (olds) {
      changes.push(
        `function ${signature(fn)}: recreated (was ${olds.map((o) => signature(o)).join(', ')})`,
      );
      up.functions.push(
        ...olds.map((o) => `DROP FUNCTION ${signature(o, true)}`),
        sqlOf.get(fn.oid)!,
      );
      down.functions.push(`DROP FUNCTION ${signature(fn, true)}`, ...olds.map((o) => o.def));
      continue;
    }
    const old = oldFunctions.get(signature(fn));
    if (old?.def === fn.def) continue;
    changes.push(`function ${signature(fn)}: ${old ? 'changed' : 'added'}`);
    up.functions.push(sqlOf.get(fn.oid)!);
    down.functions.push(old ? old.def : `DROP FUNCTION ${signature(fn, true)}`);
  }
  for (const fn of after.functions.filter((f) => !sqlOf.has(f.oid))) {
    changes.push(`function ${signature(fn)}: dropped`);
    dropFunctions.push(`DROP FUNCTION ${signature(fn, true)}`);
    undropFunctions.push(fn.def);
  }
  for (const trigger of objects.filter((o) => o.kind === 'trigger')) {
    const key = `${trigger.table}.${trigger.name}`;
    const old = oldTriggers.get(key);
    const made = newTriggers.get(key)!;
    // A trigger that uses a function dropped first goes with it, and comes back as defined.
    const recreated = old?.uses.some((oid) => droppedFirst.has(oid)) ?? false;
    if (old?.def === made.def && !recreated) continue;
    const what = !old ? 'added' : old.def === made.def ? 'recreated' : 'changed';
    changes.push(`trigger ${trigger.name} on ${trigger.table}: ${what}`);
    up.dropTriggers.push(`DROP TRIGGER IF EXISTS ${made.target}`);
    up.triggers.push(trigger.sql);
    down.dropTriggers.push(`DROP TRIGGER IF EXISTS ${made.target}`);
    if (old) down.triggers.push(old.def);
  }
  const defined = new Set(
    objects.flatMap((o) => (o.kind === 'trigger' ? [`${o.table}.${o.name}`] : [])),
  );
  for (const [key, old] of oldTriggers) {
    if (defined.has(key)) continue;
    changes.push(`trigger ${old.name} on ${old.tbl}: dropped`);
    up.dropTriggers.push(`DROP TRIGGER ${old.target}`);
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
