import { Client } from 'pg';
import { deliverSigned, envelope, type WebhookTarget } from './support/fake-platform.js';
import { referenceExamples } from './support/reference.js';
import {
  APP_SECRET,
  adminToken,
  createInstance,
  http,
  readUntil,
  useTestService,
  type TestApp,
  type TestDatabase,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352242922';

interface Envelope {
  entry: Array<{
    id: string;
    changes: Array<{
      field: string;
      value: Record<string, unknown> & { metadata?: { phone_number_id: string } };
    }>;
  }>;
}

describe('webhook processing: every message, status and template event is stored', () => {
  const context = useTestService();
  let service: TestApp;
  let db: TestDatabase;
  let instanceId: string;

  const target = (): WebhookTarget => ({
    url: `${service.url}/webhooks/messenger`,
    appSecret: APP_SECRET,
    phoneNumberId: PHONE_NUMBER_ID,
  });
  const deliver = async (payload: unknown) => {
    expect(await deliverSigned(target(), payload)).toBe(200);
  };
  /** Reads until `done` holds, for up to 5 s; the last rows read. */
  const until = <T>(read: () => Promise<T>, done: (value: T) => boolean) =>
    readUntil(read, done, 5000, 50);
  const messageRow = (wamid: string) =>
    until(
      () => db.query<Record<string, unknown>>('SELECT * FROM messages WHERE wamid = $1', [wamid]),
      (rows) => rows.length > 0,
    );
  const webhook = (value: Record<string, unknown>) => envelope(target(), 'messages', value);

  beforeAll(async () => {
    ({ service, db } = context);
    const token = await adminToken(service.url);
    instanceId = await createInstance(service.url, token, PHONE_NUMBER_ID);
  });

  it("stores every inbound example of the reference, with its raw object, and the contact's window", async () => {
    const examples = referenceExamples('/whatsapp/webhooks');
    const types = new Set<string>();
    let checked = 0;
    for (const [name, example] of Object.entries(examples)) {
      const change = (example as Envelope).entry[0].changes[0];
      const messages = change.value.messages as
        Array<{ id: string; type: string; from: string }> | undefined;
      if (change.field !== 'messages' || !messages?.length) continue;
      change.value.metadata = { ...change.value.metadata, phone_number_id: PHONE_NUMBER_ID };
      // The reference reuses one wamid across examples; de-duplication would rightly keep one.
      for (const message of messages) message.id = `${message.id}.${checked}`;
      await deliver(example);
      for (const message of messages) {
        const [row] = await messageRow(message.id);
        expect({ name, row: row !== undefined }).toEqual({ name, row: true });
        expect(row).toMatchObject({
          instance_id: instanceId,
          direction: 'inbound',
          contact: message.from,
          type: message.type,
          status: 'received',
        });
        expect(row.body).toEqual(message);
        types.add(message.type);
        checked++;
      }
    }
    for (const type of [
      'text',
      'image',
      'location',
      'contacts',
      'reaction',
      'button',
      'interactive',
      'unsupported',
    ]) {
      expect(types).toContain(type);
    }
    expect(checked).toBeGreaterThanOrEqual(10);
    // The reference's last example is a number change: the contact keeps its history under the new one.
    const [contact] = await db.query<{ wa_id: string; name: string; last_inbound_at: Date }>(
      "SELECT * FROM contacts WHERE instance_id = $1 AND '16505551234' = ANY(previous_wa_ids)",
      [instanceId],
    );
    expect(contact).toMatchObject({ wa_id: '12195555358', name: 'Sheena Nelson' });
    expect(contact.last_inbound_at).toBeInstanceOf(Date);
    const [history] = await db.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM messages m JOIN contacts c ON c.id = m.contact_id WHERE c.wa_id = $1',
      ['12195555358'],
    );
    expect(history.count).toBe(checked);
  });

  it('processes every entry, change and message of one delivery', async () => {
    const messages = (prefix: string, count: number) =>
      Array.from({ length: count }, (_, i) => ({
        from: '5511900000001',
        id: `wamid.${prefix}${i}`,
        timestamp: '1749416383',
        type: 'text',
        text: { body: `${prefix} ${i}` },
      }));
    const first = webhook({
      contacts: [{ wa_id: '5511900000001', user_id: 'US.1', profile: { name: 'Ana' } }],
      messages: messages('batchA', 40),
    });
    const second = webhook({ messages: messages('batchB', 30) });
    await deliver({
      object: 'messenger_business_account',
      entry: [
        ...first.entry,
        {
          ...second.entry[0],
          changes: [
            ...second.entry[0].changes,
            ...webhook({ messages: messages('batchC', 30) }).entry[0].changes,
          ],
        },
      ],
    });
    const rows = await until(
      () => db.query("SELECT wamid FROM messages WHERE wamid LIKE 'wamid.batch%'"),
      (found) => found.length >= 100,
    );
    expect(rows).toHaveLength(100);
    const [contact] = await db.query<{ user_id: string }>(
      "SELECT user_id FROM contacts WHERE wa_id = '5511900000001'",
    );
    expect(contact.user_id).toBe('US.1');
  });

  it('stores a re-sent message once', async () => {
    const delivery = webhook({
      messages: [
        {
          from: '5511900000002',
          id: 'wamid.dup1',
          timestamp: '1749416383',
          type: 'text',
          text: { body: 'once' },
        },
      ],
    });
    await deliver(delivery);
    await deliver(delivery);
    await deliver(delivery);
    await messageRow('wamid.dup1');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await db.query("SELECT 1 FROM messages WHERE wamid = 'wamid.dup1'")).toHaveLength(1);
  });

  it("stores a contact's messages while another write naming the contact is still open", async () => {
    const from = '5511900000077';
    const message = (id: string, timestamp: string) =>
      webhook({
        contacts: [{ wa_id: from, profile: { name: 'Lock' } }],
        messages: [{ from, id, timestamp, type: 'text', text: { body: id } }],
      });
    await deliver(message('wamid.lock1', '1749416383'));
    const [first] = await messageRow('wamid.lock1');
    // Another worker's batch inserted a message naming the contact and has not
    // committed: its foreign key check holds a (key share) lock on the contact.
    const other = new Client({ connectionString: db.url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query(
        `INSERT INTO messages (instance_id, wamid, direction, contact, contact_id, type, body, status)
         VALUES ($1, 'wamid.lock-open', 'inbound', $2, $3, 'text', '{}', 'received')`,
        [instanceId, from, first.contact_id],
      );
      await deliver(message('wamid.lock2', '1749416399'));
      const [second] = await messageRow('wamid.lock2');
      expect(second.contact_id).toBe(first.contact_id);
    } finally {
      await other.query('ROLLBACK');
      await other.end();
    }
  });

  it('applies statuses forward only, keeping errors of a failure, and stores unknown wamids', async () => {
    const status = (id: string, value: string, extra: Record<string, unknown> = {}) =>
      webhook({
        statuses: [
          { id, status: value, timestamp: '1749416400', recipient_id: '5511900000003', ...extra },
        ],
      });
    await deliver(status('wamid.st1', 'read'));
    await until(
      () => db.query("SELECT status FROM messages WHERE wamid = 'wamid.st1'"),
      (r) => r.length > 0,
    );
    await deliver(status('wamid.st1', 'delivered'));
    await deliver(status('wamid.st1', 'sent'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await db.query("SELECT status FROM messages WHERE wamid = 'wamid.st1'")).toEqual([
      { status: 'read' },
    ]);

    const errors = [
      {
        code: 131047,
        title: 'Re-engagement message',
        message: 'Re-engagement message',
        error_data: { details: 'More than 24 hours' },
      },
    ];
    await deliver(status('wamid.st2', 'sent'));
    await deliver(status('wamid.st2', 'failed', { errors }));
    const [failed] = await until(
      () =>
        db.query<{ status: string; errors: unknown }>(
          "SELECT status, errors FROM messages WHERE wamid = 'wamid.st2'",
        ),
      (rows) => rows[0]?.status === 'failed',
    );
    expect(failed).toEqual({ status: 'failed', errors });
  });

  it('keeps template status events and the latest status per template', async () => {
    const template = (event: string, time: number, reason: string | null = null) =>
      envelope(
        target(),
        'message_template_status_update',
        {
          event,
          message_template_id: 594425479261596,
          message_template_name: 'order_update',
          message_template_language: 'pt_BR',
          reason,
        },
        time,
      );
    await deliver(template('APPROVED', 1749416000));
    await deliver(template('PAUSED', 1749417000, 'LOW_QUALITY'));
    const events = await until(
      () =>
        db.query<{ event: string }>(
          "SELECT event FROM template_events WHERE template_id = '594425479261596' ORDER BY event_at",
        ),
      (rows) => rows.length >= 2,
    );
    expect(events.map((e) => e.event)).toEqual(['APPROVED', 'PAUSED']);
    // An older event arriving late does not overwrite the latest status; a replayed one is kept once.
    await deliver(template('PAUSED', 1749417000, 'LOW_QUALITY'));
    await deliver(template('APPROVED', 1749416000));
    await deliver(template('PENDING_DELETION', 1749416500));
    const all = await until(
      () =>
        db.query<{ event: string }>(
          "SELECT event FROM template_events WHERE template_id = '594425479261596' ORDER BY event_at",
        ),
      (rows) => rows.length >= 3,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(all.map((e) => e.event)).toEqual(['APPROVED', 'PENDING_DELETION', 'PAUSED']);
    expect(
      await db.query("SELECT 1 FROM template_events WHERE template_id = '594425479261596'"),
    ).toHaveLength(3);
    // An event for an account with no instance is acknowledged and not kept.
    await deliver({
      ...template('APPROVED', 1749418000),
      entry: [{ ...template('APPROVED', 1749418000).entry[0], id: '999000999' }],
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(
      await db.query("SELECT 1 FROM template_events WHERE channel_account_id = '999000999'"),
    ).toHaveLength(0);
    const [latest] = await db.query(
      "SELECT status, reason, template_name FROM templates WHERE template_id = '594425479261596'",
    );
    expect(latest).toEqual({
      status: 'PAUSED',
      reason: 'LOW_QUALITY',
      template_name: 'order_update',
    });
  });

  it('acknowledges but does not process deliveries for unknown or deactivated numbers', async () => {
    await deliver({
      ...webhook({
        messages: [
          {
            from: '5511900000004',
            id: 'wamid.unknown1',
            timestamp: '1749416383',
            type: 'text',
            text: { body: 'x' },
          },
        ],
      }),
      entry: [
        {
          id: '1',
          changes: [
            {
              field: 'messages',
              value: {
                metadata: { phone_number_id: '999999999' },
                messages: [
                  {
                    from: '5511900000004',
                    id: 'wamid.unknown1',
                    timestamp: '1749416383',
                    type: 'text',
                    text: { body: 'x' },
                  },
                ],
              },
            },
          ],
        },
      ],
    });
    const token = await adminToken(service.url);
    const inactiveId = await createInstance(service.url, token, '106540352242999');
    await http(service.url, 'POST', `/admin/instances/${inactiveId}/deactivate`, { token });
    await deliver({
      object: 'messenger_business_account',
      entry: [
        {
          id: '1',
          changes: [
            {
              field: 'messages',
              value: {
                metadata: { phone_number_id: '106540352242999' },
                messages: [
                  {
                    from: '5511900000004',
                    id: 'wamid.inactive1',
                    timestamp: '1749416383',
                    type: 'text',
                    text: { body: 'x' },
                  },
                ],
              },
            },
          ],
        },
      ],
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(
      await db.query("SELECT 1 FROM messages WHERE wamid IN ('wamid.unknown1', 'wamid.inactive1')"),
    ).toHaveLength(0);
  });
});
