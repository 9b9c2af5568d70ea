import { EventReceiver } from './support/event-receiver.js';
import {
  simulateEcho,
  simulateMessage,
  simulatePhoneContacts,
  type WebhookTarget,
} from './support/fake-platform.js';
import {
  APP_SECRET,
  adminToken,
  createApiKey,
  createInstance,
  http,
  useTestService,
  waitFor,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352270007';
const CUSTOMER = '5511977770001';

interface Line {
  wamid: string;
  direction: string;
  sent_by: string | null;
  created_at: string;
}

describe('coexistence: the phone app beside the API', () => {
  const context = useTestService({
    agent: true,
    env: { MESSAGE_BUFFER_DELAY: '1', MESSAGE_BUFFER_MAX_WAIT: '3', HANDOFF_AUTO_PAUSE_S: '3600' },
  });
  let key: string;
  let admin: string;
  let instanceId: string;
  let receiver: EventReceiver;
  const target = (): WebhookTarget => ({
    url: `${context.service.url}/webhooks/messenger`,
    appSecret: APP_SECRET,
    phoneNumberId: PHONE_NUMBER_ID,
  });
  const api = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
    http<T>(context.service.url, method, path, { token: key, body });
  /** The customer's conversation; empty while the service does not know them yet. */
  const conversation = async (to: string) =>
    (await api<{ data?: Line[] }>('GET', `/contacts/${to}/messages?limit=100`)).body.data ?? [];

  beforeAll(async () => {
    receiver = await EventReceiver.start();
    admin = await adminToken(context.service.url);
    instanceId = await createInstance(context.service.url, admin, PHONE_NUMBER_ID, 'Coex');
    key = await createApiKey(context.service.url, admin, instanceId, 'coex');
    // Events are kept for subscribers only.
    const subscribed = await http(context.service.url, 'POST', '/admin/event-subscriptions', {
      token: admin,
      body: { url: receiver.url, event_types: ['message.sent', 'contact.handoff'] },
    });
    expect(subscribed.status).toBe(201);
  });

  afterAll(async () => {
    await receiver?.stop();
  });

  it('stores an echo once as sent by the phone app, a message.sent event, and pauses the agent for that customer', async () => {
    expect((await simulateMessage(target(), { waId: CUSTOMER }, 'Oi, tem horário?')).status).toBe(
      200,
    );
    await waitFor(() => context.agent.calls.length === 1, 20_000);
    // The owner answers from the phone; the platform delivers the echo twice.
    const wamid = 'wamid.ECHO-coex-1';
    expect(await simulateEcho(target(), CUSTOMER, 'Pode vir amanhã às 10h', wamid)).toBe(200);
    expect(await simulateEcho(target(), CUSTOMER, 'Pode vir amanhã às 10h', wamid)).toBe(200);
    await waitFor(
      async () => (await conversation(CUSTOMER)).some((m) => m.wamid === wamid),
      10_000,
    );
    const echoes = (await conversation(CUSTOMER)).filter((m) => m.wamid === wamid);
    expect(echoes).toEqual([
      expect.objectContaining({ direction: 'outbound', sent_by: 'phone_app' }),
    ]);
    const [event] = await context.db.query<{ data: { sent_by: string } }>(
      `SELECT data FROM events WHERE type = 'message.sent' AND data->'message'->>'wamid' = $1`,
      [wamid],
    );
    expect(event.data.sent_by).toBe('phone_app');

    // A person answered: the agent leaves the customer's next message to them.
    const contacts = await api<{ data: Array<{ wa_id: string; handoff: { active: boolean } }> }>(
      'GET',
      `/contacts?q=${CUSTOMER}`,
    );
    expect(contacts.body.data.find((c) => c.wa_id === CUSTOMER)?.handoff.active).toBe(true);
    expect((await simulateMessage(target(), { waId: CUSTOMER }, 'Combinado!')).status).toBe(200);
    await waitFor(
      async () =>
        (await conversation(CUSTOMER)).filter((m) => m.direction === 'inbound').length === 2,
      10_000,
    );
    // Past the buffer's wait, still the one agent call.
    await new Promise((resolve) => setTimeout(resolve, 3500));
    expect(context.agent.calls).toHaveLength(1);
  });

  it('leaves a message this service sent as it is when its echo comes back', async () => {
    const to = '5511977770002';
    expect((await simulateMessage(target(), { waId: to }, 'Oi')).status).toBe(200);
    // The customer's message opens the window once stored.
    await waitFor(async () => (await conversation(to)).length > 0, 10_000);
    const sent = await api<{ wamid: string }>('POST', '/send/text', {
      to,
      body: 'Olá, daqui é a loja',
    });
    expect(sent.status).toBe(200);
    expect(await simulateEcho(target(), to, 'Olá, daqui é a loja', sent.body.wamid)).toBe(200);
    // An echo after it, once stored, says the first was read too (deliveries are taken in order).
    expect(await simulateEcho(target(), to, 'Mais alguma coisa?', 'wamid.ECHO-coex-after')).toBe(
      200,
    );
    await waitFor(
      async () => (await conversation(to)).some((m) => m.wamid === 'wamid.ECHO-coex-after'),
      10_000,
    );
    const ours = (await conversation(to)).filter((m) => m.wamid === sent.body.wamid);
    expect(ours).toEqual([expect.objectContaining({ sent_by: 'api' })]);
  });

  it("an echo that comes before the agent's own reply is recorded neither mislabels it nor pauses the agent", async () => {
    const to = '5511977770020';
    const wamid = 'wamid.race-agent-reply';
    const handoff = async () =>
      (
        await api<{ data: Array<{ wa_id: string; handoff: { active: boolean } }> }>(
          'GET',
          `/contacts?q=${to}`,
        )
      ).body.data.find((c) => c.wa_id === to)?.handoff.active;
    // The platform echoes the agent's reply and holds its answer until the echo is stored.
    let echoed: Promise<void> | undefined;
    context.platform.on('POST', /\/messages$/, (request) => {
      if ((request.body as { to?: string }).to !== to || echoed) return undefined;
      echoed = (async () => {
        expect(await simulateEcho(target(), to, 'echo: Oi', wamid)).toBe(200);
        await waitFor(
          async () =>
            (
              await context.db.query(
                `SELECT 1 FROM messages WHERE wamid = $1 AND sent_by = 'phone_app'`,
                [wamid],
              )
            ).length === 1,
          10_000,
        );
      })();
      return {
        body: {
          messaging_product: 'messenger',
          contacts: [{ input: to, wa_id: to }],
          messages: [{ id: wamid }],
        },
        release: echoed,
      };
    });
    const calls = context.agent.calls.length;
    expect((await simulateMessage(target(), { waId: to }, 'Oi')).status).toBe(200);
    await waitFor(
      async () => (await conversation(to)).some((m) => m.wamid === wamid && m.sent_by === 'agent'),
      20_000,
    );
    await echoed;
    expect((await conversation(to)).filter((m) => m.wamid === wamid)).toEqual([
      expect.objectContaining({ direction: 'outbound', sent_by: 'agent' }),
    ]);
    // The pause the echo began was no person's: it is lifted, and the agent answers again.
    await waitFor(async () => (await handoff()) === false, 10_000);
    const handoffs = await context.db.query<{ data: { paused: boolean; reason: string | null } }>(
      `SELECT data FROM events WHERE type = 'contact.handoff' AND data->'contact'->>'wa_id' = $1
       ORDER BY seq`,
      [to],
    );
    expect(handoffs.map((event) => event.data)).toEqual([
      expect.objectContaining({ paused: true, reason: 'the owner replied from the phone app' }),
      expect.objectContaining({ paused: false }),
    ]);
    expect((await simulateMessage(target(), { waId: to }, 'E amanhã?')).status).toBe(200);
    await waitFor(() => context.agent.calls.length === calls + 2, 20_000);
  });

  it('stores an echo to a customer who hides the number, at the time the phone sent it', async () => {
    const userId = 'BR.COEXHIDDEN00001';
    const wamid = 'wamid.ECHO-user-id';
    const at = Math.floor(Date.now() / 1000) - 600;
    expect(await simulateEcho(target(), { userId }, 'Bom dia!', wamid, at)).toBe(200);
    await waitFor(async () => (await conversation(userId)).some((m) => m.wamid === wamid), 10_000);
    expect(await conversation(userId)).toEqual([
      expect.objectContaining({
        wamid,
        direction: 'outbound',
        sent_by: 'phone_app',
        created_at: new Date(at * 1000).toISOString(),
      }),
    ]);
    const contacts = await api<{
      data: Array<{ user_id: string | null; wa_id: string | null; handoff: { active: boolean } }>;
    }>('GET', '/contacts?limit=100');
    expect(contacts.body.data.find((c) => c.user_id === userId)).toMatchObject({
      wa_id: null,
      handoff: { active: true },
    });
  });

  it('stores an echo delivered after its pause would have ended, and pauses nothing', async () => {
    const to = '5511977770030';
    const wamid = 'wamid.ECHO-late';
    // Sent from the phone two hours ago (HANDOFF_AUTO_PAUSE_S is one hour), delivered now.
    const at = Math.floor(Date.now() / 1000) - 7200;
    expect(await simulateEcho(target(), to, 'Bom dia', wamid, at)).toBe(200);
    // A fresh echo to another customer, delivered after it: once its pause is written,
    // the late one's would have been too.
    const other = '5511977770031';
    expect(await simulateEcho(target(), other, 'Oi', 'wamid.ECHO-fresh')).toBe(200);
    const paused = async (waId: string) =>
      (
        await api<{ data: Array<{ wa_id: string; handoff: { active: boolean } }> }>(
          'GET',
          `/contacts?q=${waId}`,
        )
      ).body.data.find((c) => c.wa_id === waId)?.handoff.active;
    await waitFor(async () => (await paused(other)) === true, 10_000);
    expect((await conversation(to)).map((m) => m.wamid)).toEqual([wamid]);
    expect(await paused(to)).toBe(false);
  });

  it('paces a number shared with the phone app at 20 a second, and says so', async () => {
    // The echoes above told it.
    const detail = await http<{ coexistence: boolean; send_rate: number }>(
      context.service.url,
      'GET',
      `/admin/instances/${instanceId}`,
      { token: admin },
    );
    expect(detail.body).toMatchObject({ coexistence: true, send_rate: 20 });
    const to = '5511977770003';
    expect((await simulateMessage(target(), { waId: to }, 'Oi')).status).toBe(200);
    await waitFor(async () => (await conversation(to)).length > 0, 10_000);
    const before = context.platform.callsTo(/\/messages$/).length;
    const sends = await Promise.all(
      Array.from({ length: 30 }, (_, n) => api('POST', '/send/text', { to, body: `msg ${n}` })),
    );
    expect(sends.map((sent) => sent.status)).toEqual(Array.from({ length: 30 }, () => 200));
    const times = context.platform
      .callsTo(/\/messages$/)
      .slice(before)
      .filter((r) => (r.body as { to?: string }).to === to)
      .map((r) => r.at);
    expect(times).toHaveLength(30);
    // Paced at 20 a second: 29 gaps of 50 ms. Arrival times at the platform jitter (a
    // first call that arrives late shortens the span), so the bound leaves a quarter
    // of it: still three times what the number's own rate (80 a second) would take.
    expect(times[29] - times[0]).toBeGreaterThanOrEqual((29 / 20) * 1000 * 0.75);

    // The number left the phone app: an admin says so, and it is paced at its own rate again.
    const left = await http(context.service.url, 'PATCH', `/admin/instances/${instanceId}`, {
      token: admin,
      body: { coexistence: false },
    });
    expect(left.status).toBe(200);
    const after = await http<{ coexistence: boolean; send_rate: number }>(
      context.service.url,
      'GET',
      `/admin/instances/${instanceId}`,
      { token: admin },
    );
    expect(after.body.coexistence).toBe(false);
    expect(after.body.send_rate).toBeGreaterThan(20);
    const refused = await http<{ code: string; details: unknown }>(
      context.service.url,
      'PATCH',
      `/admin/instances/${instanceId}`,
      { token: admin, body: { coexistence: 'no' } },
    );
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('validation_failed');
  });

  it("names contacts from the phone's address book, never over what a customer's profile says", async () => {
    const contact = async (waId: string) =>
      (
        await api<{
          data: Array<{ wa_id: string; name: string | null; phone_name: string | null }>;
        }>('GET', `/contacts?q=${waId}`)
      ).body.data.find((c) => c.wa_id === waId);
    // Maria wrote with her profile's name; João never wrote.
    expect(
      (await simulateMessage(target(), { waId: '5511977770010', name: 'Maria (perfil)' }, 'Oi'))
        .status,
    ).toBe(200);
    await waitFor(async () => (await contact('5511977770010'))?.name === 'Maria (perfil)', 10_000);
    expect(
      await simulatePhoneContacts(target(), [
        { phoneNumber: '+55 11 97777-0010', fullName: 'Maria Souza' },
        { phoneNumber: '5511977770011', fullName: 'João Lima' },
      ]),
    ).toBe(200);
    await waitFor(async () => (await contact('5511977770011'))?.name === 'João Lima', 10_000);
    expect(await contact('5511977770010')).toMatchObject({
      name: 'Maria (perfil)',
      phone_name: 'Maria Souza',
    });
    // The book renames João (its own name); the older entry delivered again changes
    // nothing; removing him keeps the name shown.
    const renamedAt = Math.floor(Date.now() / 1000) + 1;
    expect(
      await simulatePhoneContacts(target(), [
        { phoneNumber: '5511977770011', fullName: 'João Silva', timestamp: renamedAt },
      ]),
    ).toBe(200);
    await waitFor(async () => (await contact('5511977770011'))?.name === 'João Silva', 10_000);
    expect(
      await simulatePhoneContacts(target(), [
        { phoneNumber: '5511977770011', fullName: 'João Lima', timestamp: renamedAt - 60 },
        { phoneNumber: '5511977770012', fullName: 'Marcador', timestamp: renamedAt },
      ]),
    ).toBe(200);
    // Once the delivery's other entry is applied, so was the old one.
    await waitFor(async () => (await contact('5511977770012'))?.name === 'Marcador', 10_000);
    expect((await contact('5511977770011'))?.name).toBe('João Silva');
    expect(
      await simulatePhoneContacts(target(), [
        { phoneNumber: '5511977770011', action: 'remove', timestamp: renamedAt + 1 },
      ]),
    ).toBe(200);
    await waitFor(async () => (await contact('5511977770011'))?.phone_name === null, 10_000);
    expect((await contact('5511977770011'))?.name).toBe('João Silva');
  });
});
