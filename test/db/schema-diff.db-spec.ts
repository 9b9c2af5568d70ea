import type { Client } from 'pg';
import { diffSchema, verifyPlan, type SchemaDiff } from '../../src/database/schema-diff.js';
import { sqlFunction, sqlTrigger, type SqlObject } from '../../src/database/sql-objects.js';
import { SCHEMA_SQL } from '../../src/schema.js';
import { useMigratedDatabase } from './support.js';

/** The current definitions with `name`'s replaced by `object`, or left out (null). */
function withObject(name: string, object: SqlObject | null): SqlObject[] {
  const at = SCHEMA_SQL.findIndex((o) => o.name === name);
  if (at < 0) throw new Error(`${name} is not defined`);
  return SCHEMA_SQL.flatMap((o, i) => (i !== at ? [o] : object ? [object] : []));
}

function sqlOf(name: string): string {
  const object = SCHEMA_SQL.find((o) => o.name === name);
  if (!object) throw new Error(`${name} is not defined`);
  return object.sql;
}

/** Changes `from` to `to` in `text`, which must hold it. */
function edit(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`${from} is not in ${text}`);
  return text.replace(from, to);
}

describe('diffSchema', () => {
  const context = useMigratedDatabase();
  let client: Client;

  beforeAll(async () => {
    client = await context.client();
  });

  /** The diff of `objects`, after checking it runs: up leaves no change, down restores. */
  async function planned(objects: SqlObject[]): Promise<SchemaDiff> {
    const diff = await diffSchema(client, objects);
    await verifyPlan(client, objects, diff);
    return diff;
  }

  /** Runs `statements` in a transaction that is committed. */
  async function commit(statements: string[]): Promise<void> {
    await client.query('BEGIN');
    try {
      for (const statement of statements) await client.query(statement);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    }
  }

  it('finds nothing to do on a migrated database', async () => {
    expect(await planned(SCHEMA_SQL)).toEqual({ up: [], down: [], changes: [] });
  });

  it('refuses two functions of one name (no overloads)', async () => {
    const twice = [...SCHEMA_SQL, sqlFunction('mc_iso', sqlOf('mc_iso'))];
    await expect(diffSchema(client, twice)).rejects.toThrow('function mc_iso is defined twice');
  });

  it('replaces a changed body, and its down puts the old one back in the current schema', async () => {
    const objects = withObject(
      'mc_iso',
      sqlFunction('mc_iso', edit(sqlOf('mc_iso'), '.MS"Z"', '.US"Z"')),
    );
    const diff = await planned(objects);
    expect(diff.changes).toEqual(['function mc_iso(t timestamp with time zone): changed']);
    expect(diff.up).toContain(sqlOf('mc_iso').replace('.MS"Z"', '.US"Z"'));
    const restore = diff.down.find((s) => s.includes('FUNCTION') && s.includes('mc_iso'));
    expect(restore).toMatch(/^CREATE OR REPLACE FUNCTION mc_iso\(t timestamp with time zone\)/);
    expect([...diff.up, ...diff.down].filter((s) => s.includes('public.'))).toEqual([]);
  });

  it('adds a function and a trigger, quoting names in the statements it writes', async () => {
    const added = [
      sqlFunction(
        'mc_test_added',
        `CREATE OR REPLACE FUNCTION mc_test_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RETURN NULL; END $$`,
      ),
      sqlTrigger(
        'Test Added',
        'contacts',
        'CREATE TRIGGER "Test Added" AFTER INSERT ON contacts FOR EACH ROW EXECUTE FUNCTION mc_test_added()',
      ),
    ];
    const diff = await planned([...SCHEMA_SQL, ...added]);
    expect(diff.changes).toEqual([
      'function mc_test_added(): added',
      'trigger Test Added on contacts: added',
    ]);
    expect(diff.down).toEqual(
      expect.arrayContaining([
        'DROP TRIGGER IF EXISTS "Test Added" ON contacts',
        'DROP FUNCTION mc_test_added()',
      ]),
    );
  });

  it('drops a function with its trigger, and down brings both back', async () => {
    const objects = SCHEMA_SQL.filter(
      (o) => o.name !== 'mc_instance_status' && o.name !== 'tr_instance_status',
    );
    const diff = await planned(objects);
    expect(diff.changes).toEqual([
      'function mc_instance_status(): dropped',
      'trigger tr_instance_status on instances: dropped',
    ]);
    expect(diff.up.slice(-1)).toEqual(['DROP FUNCTION mc_instance_status()']);
  });

  it('changes a trigger', async () => {
    const objects = withObject(
      'tr_instance_status',
      sqlTrigger(
        'tr_instance_status',
        'instances',
        edit(sqlOf('tr_instance_status'), 'OF is_active, token_rejected_at', 'OF is_active'),
      ),
    );
    const diff = await planned(objects);
    expect(diff.changes).toEqual(['trigger tr_instance_status on instances: changed']);
    expect(diff.down.slice(-1)[0]).toMatch(/^CREATE TRIGGER tr_instance_status .* ON instances /);
  });

  it('drops a function first when its return type changes', async () => {
    const objects = withObject(
      'mc_iso',
      sqlFunction('mc_iso', edit(sqlOf('mc_iso'), 'RETURNS text', 'RETURNS varchar')),
    );
    const diff = await planned(objects);
    expect(diff.changes).toEqual([
      'function mc_iso(t timestamp with time zone): recreated (was mc_iso(t timestamp with time zone))',
    ]);
  });

  it('refuses to drop a function first when more than triggers use it', async () => {
    const objects = withObject(
      'mc_iso',
      sqlFunction('mc_iso', edit(sqlOf('mc_iso'), 'RETURNS text', 'RETURNS varchar')),
    );
    await client.query('CREATE VIEW test_iso AS SELECT mc_iso(now()) AS at');
    try {
      await expect(diffSchema(client, objects)).rejects.toThrow(
        /^function mc_iso: cannot change return type .*, and mc_iso\(t timestamp with time zone\) cannot be dropped first: cannot drop function/,
      );
    } finally {
      await client.query('DROP VIEW test_iso');
    }
  });

  describe('a renamed parameter', () => {
    // The function is dropped and created again; a trigger that calls it in its WHEN
    // depends on it (pg_depend), so goes and comes back with it.
    const renamed = sqlFunction(
      'mc_turn_open',
      edit(
        edit(sqlOf('mc_turn_open'), 'mc_turn_open(status text)', 'mc_turn_open(state text)'),
        'SELECT status IN',
        'SELECT state IN',
      ),
    );
    const usesIt = sqlTrigger(
      'tr_test_open',
      'turns',
      `CREATE TRIGGER tr_test_open AFTER UPDATE ON turns FOR EACH ROW
WHEN (mc_turn_open(NEW.status)) EXECUTE FUNCTION mc_turn_failed()`,
    );

    beforeEach(async () => {
      await client.query(usesIt.sql);
    });
    afterEach(async () => {
      await client.query('DROP TRIGGER IF EXISTS tr_test_open ON turns');
    });

    it('drops the function first and recreates the trigger that uses it, as defined', async () => {
      const objects = [...withObject('mc_turn_open', renamed), usesIt];
      const diff = await planned(objects);
      expect(diff.changes).toEqual([
        'function mc_turn_open(state text): recreated (was mc_turn_open(status text))',
        'trigger tr_test_open on turns: recreated',
      ]);
      const at = (statement: string) => diff.up.indexOf(statement);
      expect(at('DROP TRIGGER IF EXISTS tr_test_open ON turns')).toBeGreaterThan(-1);
      expect(at('DROP FUNCTION mc_turn_open(status text)')).toBeGreaterThan(
        at('DROP TRIGGER IF EXISTS tr_test_open ON turns'),
      );
      expect(at(renamed.sql)).toBeGreaterThan(at('DROP FUNCTION mc_turn_open(status text)'));
      expect(at(usesIt.sql)).toBeGreaterThan(at(renamed.sql));

      // Applied for real, as the migration would: nothing left to do; its down, the start.
      await commit(diff.up);
      expect((await diffSchema(client, objects)).changes).toEqual([]);
      await commit(diff.down);
      expect((await diffSchema(client, [...SCHEMA_SQL, usesIt])).changes).toEqual([]);
    });

    it('drops a trigger that uses it and is no longer defined', async () => {
      const diff = await planned(withObject('mc_turn_open', renamed));
      expect(diff.changes).toEqual([
        'function mc_turn_open(state text): recreated (was mc_turn_open(status text))',
        'trigger tr_test_open on turns: dropped',
      ]);
    });
  });

  describe('verifyPlan', () => {
    it('fails a plan that drops a function a trigger still uses', async () => {
      const objects = SCHEMA_SQL.filter((o) => o.name !== 'mc_instance_status');
      const diff = await diffSchema(client, objects);
      expect(diff.changes).toEqual(['function mc_instance_status(): dropped']);
      await expect(verifyPlan(client, objects, diff)).rejects.toThrow(
        /^up statement \d+ \(DROP FUNCTION mc_instance_status\(\)\): cannot drop function/,
      );
    });

    it('fails a down in the wrong order', async () => {
      const objects = [
        ...SCHEMA_SQL,
        sqlFunction(
          'mc_test_added',
          `CREATE OR REPLACE FUNCTION mc_test_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RETURN NULL; END $$`,
        ),
        sqlTrigger(
          'tr_test_added',
          'contacts',
          'CREATE TRIGGER tr_test_added AFTER INSERT ON contacts FOR EACH ROW EXECUTE FUNCTION mc_test_added()',
        ),
      ];
      const diff = await diffSchema(client, objects);
      const [settings, lock, ...rest] = diff.down;
      const reversed = { ...diff, down: [settings, lock, ...rest.reverse()] };
      await expect(verifyPlan(client, objects, reversed)).rejects.toThrow(
        /^down statement \d+ \(DROP FUNCTION mc_test_added\(\)\): cannot drop function/,
      );
    });

    it('fails a down that does not restore, and an up that leaves a change', async () => {
      const objects = withObject(
        'mc_iso',
        sqlFunction('mc_iso', edit(sqlOf('mc_iso'), '.MS"Z"', '.US"Z"')),
      );
      const diff = await diffSchema(client, objects);
      await expect(verifyPlan(client, objects, { ...diff, down: [] })).rejects.toThrow(
        'down does not restore:\n  function mc_iso(t timestamp with time zone): not as it was',
      );
      await expect(verifyPlan(client, objects, { ...diff, up: [] })).rejects.toThrow(
        'after up, the database still differs:\n  function mc_iso(t timestamp with time zone): changed',
      );
    });
  });
});
