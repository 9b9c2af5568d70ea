import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../src/database/database.module.js';
import { adminToken, createApiKey, http, startTestApp, TestDatabase } from './support/test-app.js';

/** Runs the first `count` migrations (all of them by default) against `url`. */
async function migrate(url: string, count = MIGRATIONS.length): Promise<void> {
  const source = new DataSource({
    type: 'postgres',
    url,
    migrations: MIGRATIONS.slice(0, count),
    logging: false,
  });
  await source.initialize();
  try {
    await source.runMigrations({ transaction: 'all' });
  } finally {
    await source.destroy();
  }
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
});
