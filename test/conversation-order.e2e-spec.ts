import { Client } from 'pg';
import {
  deliverSigned,
  envelope,
  type FakePlatform,
  type WebhookTarget,
} from './support/fake-platform.js';
import {
  APP_SECRET,
  adminToken,
  createApiKey,
  createInstance,
  http,
  readUntil,
  useTestService,
  waitFor,
  type TestApp,
  type TestDatabase,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352288077';

interface ConversationPage {
  data: Array<{ wamid: string; direction: string; position: string }>;
  older: string | null;
  newer: string | null;
}

interface ErrorAnswer {
  statusCode: number;
  error: string;
  code: string;
  message: string;
  details?: Array<{ field: string; message: string }>;
}

const b64 = (value: unknown): string =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** Text a client must never see echoed back: it stands for a secret pasted by mistake. */
const PASTED_SECRET = 'sk_live_DoNotEchoMe0123456789';

describe('conversation order and cursors', () => {
  // No agent: the conversations hold only what the tests put there.
  const context = useTestService();
  let service: TestApp;
  let platform: FakePlatform;
  let db: TestDatabase;
  let token: string;
  let instanceId: string;
  let key: string;
  let sequence = 0;

  const target = (): WebhookTarget => ({
    url: `${service.url}/webhooks/messenger`,
    appSecret: APP_SECRET,
    phoneNumberId: PHONE_NUMBER_ID,
  });
  const text = (from: string, body: string, at: number, wamid = `wamid.order${++sequence}`) => ({
    from,
    id: wamid,
    timestamp: String(at),
    type: 'text',
    text: { body },
  });
  /** One delivery holding `messages` (each a text from its sender). */
  const deliver = async (messages: Array<ReturnType<typeof text>>): Promise<void> => {
    const senders = [...new Set(messages.map((m) => m.from))];
    const status = await deliverSigned(
      target(),
      envelope(target(), 'messages', {
        contacts: senders.map((wa_id) => ({ profile: { name: `User ${wa_id}` }, wa_id })),
        messages,
      }),
    );
    expect(status).toBe(200);
  };
  const client = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
    http<T>(service.url, method, path, { token: key, body });
  const conversation = async (who: string, query = ''): Promise<ConversationPage> => {
    const answer = await client<ConversationPage>('GET', `/contacts/${who}/messages${query}`);
    expect(answer.status).toBe(200);
    return answer.body;
  };
  const stored = (wamid: string) =>
    waitFor(
      async () => (await db.query('SELECT 1 FROM messages WHERE wamid = $1', [wamid])).length > 0,
    );
  const now = () => Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    ({ service, platform, db } = context);
    token = await adminToken(service.url);
    instanceId = await createInstance(service.url, token, PHONE_NUMBER_ID, 'Order');
    key = await createApiKey(service.url, token, instanceId, 'order');
  });

  beforeEach(() => {
    platform.reset();
  });

  it('lists a message of a large delivery stored late before the next one, sends in between', async () => {
    const blocker = '5511900090001';
    const who = '5511900090002';
    const newcomer = '5511900090003';
    // Known before, with the lowest id: a batch locks its contacts by id (the lock order), so
    // the large delivery below waits on this one before it holds any other.
    await db.query(`INSERT INTO contacts (id, instance_id, wa_id) VALUES ($1, $2, $3)`, [
      '00000000-0000-4000-8000-000000000001',
      instanceId,
      blocker,
    ]);
    await deliver([text(blocker, 'oi', now() - 60), text(who, 'quero um bolo', now() - 60)]);
    const opening = `wamid.order${sequence}`;
    await stored(opening);
    const sent = await client<{ wamid: string }>('POST', '/send/text', {
      to: who,
      body: 'De qual sabor?',
    });
    expect(sent.status).toBe(200);
    await stored(sent.body.wamid);
    // The customer writes after the send, in a later second than its record.
    const recorded = Date.now();
    await waitFor(() => Math.floor(Date.now() / 1000) > Math.floor(recorded / 1000));
    const at = now();

    // A worker is slow with a large delivery: it waits on a contact another session holds.
    const holder = new Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM contacts WHERE wa_id = $1 FOR UPDATE', [blocker]);
      const chocolate = text(who, 'chocolate', at);
      const first = text(newcomer, 'olá', at);
      const fillers = Array.from({ length: 30 }, (_, i) =>
        text(`55119000991${String(i).padStart(2, '0')}`, `filler ${i}`, at),
      );
      await deliver([text(blocker, 'mais uma', at), chocolate, first, ...fillers]);
      await waitFor(
        async () =>
          (
            await holder.query(
              `SELECT 1 FROM pg_stat_activity
               WHERE datname = current_database() AND wait_event_type = 'Lock'`,
            )
          ).rows.length > 0,
      );
      // Meanwhile the next messages come alone, a second later and at once; they are stored first.
      const saturday = text(who, 'para sábado', at + 1);
      const second = text(newcomer, 'tudo bem?', at);
      await deliver([saturday]);
      await deliver([second]);
      await stored(saturday.id);
      await stored(second.id);
      expect(
        await db.query('SELECT 1 FROM messages WHERE wamid = ANY($1)', [[chocolate.id, first.id]]),
      ).toEqual([]);
      await holder.query('COMMIT');
      await stored(chocolate.id);
      await stored(first.id);

      const page = await conversation(who);
      expect(page.data.map((m) => m.wamid)).toEqual([
        opening,
        sent.body.wamid,
        chocolate.id,
        saturday.id,
      ]);
      expect(page.data.map((m) => m.direction)).toEqual([
        'inbound',
        'outbound',
        'inbound',
        'inbound',
      ]);
      // Positions sort as the listing does.
      const positions = page.data.map((m) => m.position);
      expect([...positions].sort()).toEqual(positions);
      expect((await conversation(newcomer)).data.map((m) => m.wamid)).toEqual([
        first.id,
        second.id,
      ]);
      // Pages back keep that order.
      const latest = await conversation(who, '?limit=2');
      expect(latest.data.map((m) => m.wamid)).toEqual([chocolate.id, saturday.id]);
      const back = await conversation(who, `?limit=2&before=${latest.older}`);
      expect(back.data.map((m) => m.wamid)).toEqual([opening, sent.body.wamid]);
      expect(back.older).toBeNull();
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
  });

  it('a client following with after sees every message exactly once while writers commit out of order', async () => {
    const who = '5511900090101';
    await deliver([text(who, 'começo', now())]);
    await stored(`wamid.order${sequence}`);
    const [contact] = await db.query<{ id: string }>('SELECT id FROM contacts WHERE wa_id = $1', [
      who,
    ]);
    let cursor = (await conversation(who)).newer;
    expect(cursor).not.toBeNull();
    const seen: string[] = [];
    const follow = async (): Promise<void> => {
      const page = await conversation(who, `?after=${cursor}`);
      seen.push(...page.data.map((m) => m.wamid));
      cursor = page.newer;
    };

    const first = new Client({ connectionString: db.url });
    const second = new Client({ connectionString: db.url });
    await first.connect();
    await second.connect();
    const insert = (writer: Client, wamid: string) =>
      writer.query(
        `INSERT INTO messages (instance_id, wamid, direction, contact, contact_id, type, body,
           status, created_at, received_at)
         VALUES ($1, $2, 'inbound', $3, $4, 'text', '{}', 'received', now(), now())`,
        [instanceId, wamid, who, contact.id],
      );
    const written: string[] = [];
    try {
      for (let round = 0; round < 25; round++) {
        // The first writer takes its position, the second takes a later one and commits first.
        const early = `wamid.race${round}a`;
        const late = `wamid.race${round}b`;
        await first.query('BEGIN');
        await insert(first, early);
        await second.query('BEGIN');
        await insert(second, late);
        await second.query('COMMIT');
        await follow();
        await first.query('COMMIT');
        await follow();
        written.push(early, late);
      }
    } finally {
      await first.query('ROLLBACK').catch(() => undefined);
      await first.end();
      await second.end();
    }
    await readUntil(follow, () => seen.length >= written.length);
    await follow();
    expect([...seen].sort()).toEqual([...written].sort());
  });

  it('a send whose status came before its record reaches a follower who is past the status', async () => {
    const who = '5511900090151';
    await deliver([text(who, 'oi', now())]);
    await stored(`wamid.order${sequence}`);
    const probe = await client<{ wamid: string }>('POST', '/send/text', { to: who, body: 'Olá!' });
    expect(probe.status).toBe(200);
    // The simulator numbers its wamids: the next send gets the next one.
    const next = `wamid.fake${Number(probe.body.wamid.replace('wamid.fake', '')) + 1}`;
    await stored(probe.body.wamid);
    let cursor = (await conversation(who)).newer;
    const seen: string[] = [];
    const follow = async (): Promise<string[]> => {
      const page = await conversation(who, `?after=${cursor}`);
      seen.push(...page.data.map((m) => m.wamid));
      cursor = page.newer;
      return seen;
    };

    // The platform's status of the next send arrives before the send's answer is recorded.
    const status = await deliverSigned(
      target(),
      envelope(target(), 'messages', {
        statuses: [{ id: next, status: 'delivered', timestamp: String(now()), recipient_id: who }],
      }),
    );
    expect(status).toBe(200);
    await stored(next);
    // The follower moves past it: a message the customer sends meanwhile.
    const meanwhile = text(who, 'alguém aí?', now());
    await deliver([meanwhile]);
    await readUntil(follow, (list) => list.includes(meanwhile.id));

    const sent = await client<{ wamid: string }>('POST', '/send/text', { to: who, body: 'Sim!' });
    expect(sent.body.wamid).toBe(next);
    await readUntil(follow, (list) => list.includes(next));
    await follow();
    expect(seen).toEqual([meanwhile.id, next]);
  });

  it('answers 400 in the contract format to a cursor that is not its own, on every list', async () => {
    const who = '5511900090201';
    await deliver([text(who, 'oi', now())]);
    await stored(`wamid.order${sequence}`);
    const subscription = await http<{ id: string }>(
      service.url,
      'POST',
      '/admin/event-subscriptions',
      {
        token,
        body: {
          url: 'http://127.0.0.1:1/events',
          event_types: ['message.received'],
          enabled: false,
        },
      },
    );
    expect(subscription.status).toBe(201);
    const uuid = '00000000-0000-4000-8000-000000000001';
    const timeIdCursors = [
      b64(['-1', uuid]),
      b64(['1.5', uuid]),
      b64(['253402300800000000', uuid]), // past 9999-12-31
      b64(['+275760-09-13T00:00:00.000Z', uuid]),
      b64(['2025-02-30T00:00:00.000000Z', uuid]),
      b64([PASTED_SECRET, uuid]),
      b64(['2025-01-01T00:00:00.000000Z', PASTED_SECRET]),
      PASTED_SECRET,
    ];
    const lists: Array<{ path: string; auth: string; cursors: string[] }> = [
      { path: '/contacts?cursor=', auth: key, cursors: timeIdCursors },
      { path: '/admin/turns?cursor=', auth: token, cursors: timeIdCursors },
      {
        path: `/admin/event-subscriptions/${subscription.body.id}/deliveries?cursor=`,
        auth: token,
        cursors: [b64('99999999999999999999'), b64('-1'), b64(PASTED_SECRET), PASTED_SECRET],
      },
      {
        path: `/contacts/${who}/messages?before=`,
        auth: key,
        cursors: [
          '99999999999999999999',
          'f'.repeat(41), // the shape of a position, its time past 9999
          '1.1',
          `${'0'.repeat(40)}g`,
          PASTED_SECRET,
        ],
      },
      {
        path: `/contacts/${who}/messages?after=`,
        auth: key,
        cursors: [
          '99999999999999999999',
          '99999999999999999999999.1',
          '1.99999999999999999999',
          'f'.repeat(44),
          '-1.1',
          PASTED_SECRET,
        ],
      },
    ];
    for (const list of lists) {
      for (const cursor of list.cursors) {
        const answer = await http<ErrorAnswer>(
          service.url,
          'GET',
          `${list.path}${encodeURIComponent(cursor)}`,
          { token: list.auth },
        );
        const seen = `${list.path}${cursor}: ${answer.status} ${answer.text}`;
        expect(seen).toBe(`${list.path}${cursor}: 400 ${answer.text}`);
        expect(answer.body).toMatchObject({
          statusCode: 400,
          error: 'Bad Request',
          code: 'validation_failed',
        });
        expect(answer.body.details?.length).toBeGreaterThan(0);
        expect(answer.text).not.toContain(PASTED_SECRET);
        expect(answer.text).not.toMatch(/stack|\.ts:\d|at [A-Za-z]+ \(/);
      }
    }
  });
});
