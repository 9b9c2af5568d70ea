import {
  deliverSigned,
  envelope,
  type FakePlatform,
  type WebhookTarget,
} from './support/fake-platform.js';
import {
  adminToken,
  createApiKey,
  createInstance,
  http,
  useTestService,
  waitFor,
  type TestApp,
  type TestDatabase,
} from './support/test-app.js';

const SECRET = 'test-app-secret-1';
const PHONE_NUMBER_ID = '106540352288077';

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
  const context = useTestService({ PLATFORM_APP_SECRET: SECRET });
  let service: TestApp;
  let platform: FakePlatform;
  let db: TestDatabase;
  let token: string;
  let instanceId: string;
  let key: string;
  let sequence = 0;

  const target = (): WebhookTarget => ({
    url: `${service.url}/webhooks/messenger`,
    appSecret: SECRET,
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
