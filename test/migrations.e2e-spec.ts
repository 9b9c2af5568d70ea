import { Client } from 'pg';
import { DataSource, type Logger, type QueryRunner } from 'typeorm';
import { loadConfig } from '../src/config/load-config.js';
import { MigrationRunner } from '../src/database/database.module.js';
import { MIGRATIONS } from '../src/database/migrations/index.js';
import { adminToken, createApiKey, http, startTestApp, TestDatabase } from './support/test-app.js';

/** A statement a migration run sent, and whether it ran inside a transaction. */
interface Sent {
  sql: string;
  inTransaction: boolean;
}

/**
 * Runs the first `count` migrations (all of them by default) against `url`,
 * as the service's runner does (a transaction each, unless a migration opts
 * out); `sent` receives the statements.
 */
async function migrate(url: string, count = MIGRATIONS.length, sent: Sent[] = []): Promise<void> {
  const record = (sql: string, _parameters?: unknown[], runner?: QueryRunner) =>
    sent.push({
      sql: sql.replace(/\s+/g, ' ').trim(),
      inTransaction: !!runner?.isTransactionActive,
    });
  const logger: Logger = {
    logQuery: record,
    logQueryError: () => undefined,
    logQuerySlow: () => undefined,
    logSchemaBuild: () => undefined,
    logMigration: () => undefined,
    log: () => undefined,
  };
  const source = new DataSource({
    type: 'postgres',
    url,
    migrations: MIGRATIONS.slice(0, count),
    logging: ['query'],
    logger,
  });
  await source.initialize();
  try {
    await source.runMigrations({ transaction: 'each' });
  } finally {
    await source.destroy();
  }
}

/** The indexes of `messages` by name: valid or not, and their definition. */
async function messageIndexes(
  db: TestDatabase,
): Promise<Record<string, { valid: boolean; definition: string }>> {
  const found = await db.query<{ name: string; valid: boolean; definition: string }>(
    `SELECT c.relname AS name, i.indisvalid AS valid, pg_get_indexdef(i.indexrelid) AS definition
     FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE i.indrelid = 'messages'::regclass`,
  );
  return Object.fromEntries(found.map(({ name, ...rest }) => [name, rest]));
}

const before = (name: string) => MIGRATIONS.findIndex((migration) => migration.name === name);

describe('migrations keep the data of earlier versions', () => {
  let db: TestDatabase;

  beforeEach(async () => {
    db = await TestDatabase.create();
  });

  afterEach(async () => {
    await db.drop();
  });

  it('turns a pending batch into a claimed turn, and keeps waiting messages waiting', async () => {
    await migrate(db.url, before('DurableTurns1764100000000'));
    const [instance] = await db.query<{ id: string }>(
      `INSERT INTO instances (name, phone_number_id, channel_account_id, access_token_encrypted,
         token_type, webhook_verify_token)
       VALUES ('old', '1', '2', 'x', 'system_user', 'verify') RETURNING id`,
    );
    await db.query(
      `INSERT INTO contacts (instance_id, wa_id, user_id, name, last_inbound_at)
       VALUES ($1, '5511900000001', 'BR.OLD1', 'Old Ana', now())`,
      [instance.id],
    );
    await db.query(
      `INSERT INTO batches (id, instance_id, contact, status)
       VALUES ('00000000-0000-4000-8000-000000000001', $1, '5511900000001', 'pending')`,
      [instance.id],
    );
    await db.query(
      `INSERT INTO messages (instance_id, wamid, direction, contact, type, body, status, batch_id)
       VALUES ($1, 'wamid.in-batch', 'inbound', '5511900000001', 'text', '{}', 'received',
               '00000000-0000-4000-8000-000000000001'),
              ($1, 'wamid.waiting', 'inbound', '5511900000001', 'text', '{}', 'received', NULL),
              ($1, 'wamid.sent', 'outbound', '5511900000002', 'text', '{}', 'sent', NULL)`,
      [instance.id],
    );

    await migrate(db.url);

    const [contact] = await db.query<Record<string, unknown>>(
      "SELECT * FROM contacts WHERE wa_id = '5511900000001'",
    );
    expect(contact).toMatchObject({ user_id: 'BR.OLD1', name: 'Old Ana' });
    const [turn] = await db.query<Record<string, unknown>>('SELECT * FROM turns');
    expect(turn).toMatchObject({
      id: '00000000-0000-4000-8000-000000000001',
      status: 'claimed',
      contact_id: contact.id,
      lease_owner: null,
    });
    const messages = await db.query<Record<string, unknown>>(
      'SELECT wamid, turn_id, awaiting_turn, contact_id FROM messages ORDER BY wamid',
    );
    const [sentTo] = await db.query<{ id: string }>(
      "SELECT id FROM contacts WHERE wa_id = '5511900000002'",
    );
    expect(messages).toEqual([
      { wamid: 'wamid.in-batch', turn_id: turn.id, awaiting_turn: false, contact_id: contact.id },
      { wamid: 'wamid.sent', turn_id: null, awaiting_turn: false, contact_id: sentTo.id },
      { wamid: 'wamid.waiting', turn_id: null, awaiting_turn: true, contact_id: contact.id },
    ]);
  });

  it("a conversation's cursors of the earlier version still page back and follow after the upgrade", async () => {
    await migrate(db.url, before('ConversationPositions1764800000000'));
    const [instance] = await db.query<{ id: string }>(
      `INSERT INTO instances (name, phone_number_id, channel_account_id, access_token_encrypted,
         token_type, webhook_verify_token)
       VALUES ('old', '1', '2', 'x', 'system_user', 'verify') RETURNING id`,
    );
    const [contact] = await db.query<{ id: string }>(
      `INSERT INTO contacts (instance_id, wa_id, name, last_inbound_at)
       VALUES ($1, '5511900000009', 'Old Ana', now()) RETURNING id`,
      [instance.id],
    );
    const store = (wamid: string, secondsAgo: number) =>
      db.query<{ seq: string }>(
        `INSERT INTO messages (instance_id, wamid, direction, contact, contact_id, type, body,
           status, created_at, received_at)
         VALUES ($1, $2, 'inbound', '5511900000009', $3, 'text', '{}', 'received',
                 now() - $4 * interval '1 second', now() - $4 * interval '1 second')
         RETURNING seq::text`,
        [instance.id, wamid, contact.id, secondsAgo],
      );
    const seqs: string[] = [];
    for (const [wamid, ago] of [
      ['wamid.old1', 30],
      ['wamid.old2', 20],
      ['wamid.old3', 10],
    ] as const) {
      seqs.push((await store(wamid, ago))[0].seq);
    }

    const service = await startTestApp({ DATABASE_URL: db.url });
    try {
      await store('wamid.new4', 0);
      const key = await createApiKey(
        service.url,
        await adminToken(service.url),
        instance.id,
        'old',
      );
      const read = async (query: string) => {
        const answer = await http<{ data: Array<{ wamid: string }> }>(
          service.url,
          'GET',
          `/contacts/5511900000009/messages?${query}`,
          { token: key },
        );
        expect(answer.status).toBe(200);
        return answer.body.data.map((m) => m.wamid);
      };
      // `newer` and `older` of the earlier version were the seq of a message.
      expect(await read(`after=${seqs[1]}`)).toEqual(['wamid.old3', 'wamid.new4']);
      expect(await read(`before=${seqs[2]}`)).toEqual(['wamid.old1', 'wamid.old2']);
      expect(await read('')).toEqual(['wamid.old1', 'wamid.old2', 'wamid.old3', 'wamid.new4']);
    } finally {
      await service.close();
    }
  });

  it('builds the conversation indexes concurrently, outside a transaction, and takes the table lock only briefly', async () => {
    await migrate(db.url, before('ConversationPositions1764800000000'));
    const sent: Sent[] = [];
    await migrate(db.url, MIGRATIONS.length, sent);

    const indexes = await messageIndexes(db);
    expect(indexes.ix_messages_contact).toBeUndefined();
    expect(indexes.ix_messages_contact_arrival).toEqual({
      valid: true,
      definition: expect.stringContaining(
        "(contact_id, date_trunc('second'::text, (created_at AT TIME ZONE 'UTC'::text)), received_at, seq) WHERE (contact_id IS NOT NULL)",
      ),
    });
    expect(indexes.ix_messages_contact_stored).toEqual({
      valid: true,
      definition: expect.stringContaining(
        '(contact_id, stored_tx, seq) WHERE (contact_id IS NOT NULL)',
      ),
    });

    // Every index built or dropped on messages: CONCURRENTLY (writers go on), in no transaction.
    const indexWork = sent.filter(
      (s) => /^(CREATE|DROP) INDEX/i.test(s.sql) && /ix_messages_|ON messages /.test(s.sql),
    );
    // (the conversation's two, the one they replace, then the sends by time of SendsByTime1795674961575)
    expect(indexWork.map((s) => s.sql.split(' ').slice(0, 3).join(' '))).toEqual([
      'CREATE INDEX CONCURRENTLY',
      'CREATE INDEX CONCURRENTLY',
      'DROP INDEX CONCURRENTLY',
      'CREATE INDEX CONCURRENTLY',
    ]);
    expect(indexes.ix_messages_sent_at).toEqual({
      valid: true,
      definition: expect.stringContaining(
        "(created_at) WHERE ((direction)::text = 'outbound'::text)",
      ),
    });
    expect(indexWork.every((s) => !s.inTransaction)).toBe(true);
    // The strongest lock (ALTER TABLE) is asked for with a bound on the wait, in its own transaction.
    const alter = sent.findIndex((s) => /^ALTER TABLE messages/.test(s.sql));
    const timeout = sent.findIndex((s) => /^SET LOCAL lock_timeout/.test(s.sql));
    expect(timeout).toBeGreaterThanOrEqual(0);
    expect(timeout).toBeLessThan(alter);
    expect(sent.slice(timeout, alter + 1).every((s) => s.inTransaction)).toBe(true);
  });

  it('gives up on the table lock behind a long transaction, and the next run completes', async () => {
    await migrate(db.url, before('ConversationPositions1764800000000'));
    // An old pod's transaction that has read messages and stays open.
    const reader = new Client({ connectionString: db.url });
    await reader.connect();
    try {
      await reader.query('BEGIN');
      await reader.query('SELECT count(*) FROM messages');
      await expect(migrate(db.url)).rejects.toThrow(/lock timeout/);
      expect(await messageIndexes(db)).toHaveProperty('ix_messages_contact');
      await reader.query('COMMIT');
    } finally {
      await reader.end();
    }

    await migrate(db.url);
    const applied = await db.query<{ name: string }>('SELECT name FROM migrations ORDER BY id');
    expect(applied.map((row) => row.name)).toEqual(MIGRATIONS.map((migration) => migration.name));
    const [column] = await db.query(
      `SELECT column_default FROM information_schema.columns
       WHERE table_name = 'messages' AND column_name = 'stored_tx'`,
    );
    expect(column).toEqual({ column_default: 'pg_current_xact_id()' });
  });

  it('rebuilds an index an interrupted build left invalid', async () => {
    await migrate(db.url, before('ConversationPositions1764800000000') + 1);
    const [instance] = await db.query<{ id: string }>(
      `INSERT INTO instances (name, phone_number_id, channel_account_id, access_token_encrypted,
         token_type, webhook_verify_token)
       VALUES ('old', '1', '2', 'x', 'system_user', 'verify') RETURNING id`,
    );
    const [contact] = await db.query<{ id: string }>(
      `INSERT INTO contacts (instance_id, wa_id, name, last_inbound_at)
       VALUES ($1, '5511900000009', 'Old Ana', now()) RETURNING id`,
      [instance.id],
    );
    await db.query(
      `INSERT INTO messages (instance_id, wamid, direction, contact, contact_id, type, body, status)
       VALUES ($1, 'wamid.a', 'inbound', '5511900000009', $2, 'text', '{}', 'received'),
              ($1, 'wamid.b', 'inbound', '5511900000009', $2, 'text', '{}', 'received')`,
      [instance.id, contact.id],
    );
    // A concurrent build that fails leaves its index behind, INVALID, under the names the migration
    // builds (as a build cut by a killed migrator does).
    for (const name of ['ix_messages_contact_arrival', 'ix_messages_contact_stored']) {
      await expect(
        db.query(`CREATE UNIQUE INDEX CONCURRENTLY ${name} ON messages (contact_id)`),
      ).rejects.toThrow(/could not create unique index/);
    }
    expect(await messageIndexes(db)).toMatchObject({
      ix_messages_contact_arrival: { valid: false },
      ix_messages_contact_stored: { valid: false },
    });

    await migrate(db.url);
    const indexes = await messageIndexes(db);
    expect(indexes.ix_messages_contact).toBeUndefined();
    expect(indexes.ix_messages_contact_arrival).toEqual({
      valid: true,
      definition: expect.stringMatching(
        /^CREATE INDEX .*\(contact_id, date_trunc.*received_at, seq\)/,
      ),
    });
    expect(indexes.ix_messages_contact_stored).toEqual({
      valid: true,
      definition: expect.stringMatching(/^CREATE INDEX .*\(contact_id, stored_tx, seq\)/),
    });
  });
});

describe('the migration runner', () => {
  let db: TestDatabase;

  beforeEach(async () => {
    db = await TestDatabase.create();
  });

  afterEach(async () => {
    await db.drop();
  });

  it('lets processes starting together migrate once, none waiting on the other forever', async () => {
    // One runner builds indexes concurrently while the others wait for its lock:
    // a waiter blocked inside pg_advisory_lock holds a snapshot that the
    // concurrent build waits for, and neither ever went on.
    const { config } = loadConfig({ DATABASE_URL: db.url, DB_MIGRATIONS_RUN: 'true' });
    await Promise.all([0, 1, 2].map(() => new MigrationRunner(config).onModuleInit()));

    const applied = await db.query<{ name: string }>('SELECT name FROM migrations ORDER BY id');
    expect(applied.map((row) => row.name)).toEqual(MIGRATIONS.map((migration) => migration.name));
  }, 120_000);
});
