import { FakeAgent } from './support/fake-agent.js';
import {
  FakePlatform,
  deliverSigned,
  envelope,
  simulateMessage,
  type WebhookTarget,
} from './support/fake-platform.js';
import { holdSends } from './support/send-hold.js';
import {
  APP_SECRET,
  TestDatabase,
  adminToken,
  createApiKey,
  createInstance,
  http,
  startTestApp,
  type TestApp,
  waitFor,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352200601';

let sequence = 0;

/** A promise and the function that settles it. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/**
 * A customer's user id or number changes while a message to them is on its
 * way (the agent is still answering, or the platform asked for a retry): the
 * message goes to the new address, read from the contact when it is sent.
 */
describe('replies and sends follow a re-keyed contact', () => {
  let db: TestDatabase;
  let platform: FakePlatform;
  let agent: FakeAgent;
  let service: TestApp;
  let key: string;
  let target: WebhookTarget;

  const deliver = async (messages: unknown[]) => {
    expect(await deliverSigned(target, envelope(target, 'messages', { messages }))).toBe(200);
  };
  const now = () => String(Math.floor(Date.now() / 1000));
  const userIdChanged = (previous: string, next: string) =>
    deliver([
      {
        from_user_id: next,
        id: `wamid.rekey${++sequence}`,
        timestamp: now(),
        type: 'system',
        system: {
          body: 'User changed their user id',
          type: 'user_changed_user_id',
          previous_user_id: previous,
          user_id: next,
        },
      },
    ]);
  const numberChanged = (previous: string, next: string) =>
    deliver([
      {
        from: previous,
        id: `wamid.rekey${++sequence}`,
        timestamp: now(),
        type: 'system',
        system: {
          body: `User A changed from ${previous} to ${next}`,
          type: 'user_changed_number',
          wa_id: next,
        },
      },
    ]);
  /** Once a client can read the contact's conversation under its new key. */
  const rekeyed = (newKey: string) =>
    waitFor(
      async () =>
        (await http(service.url, 'GET', `/contacts/${newKey}/messages`, { token: key })).status ===
        200,
    );
  /** Once the turn's reply parts are stored (queued, not sent: the pacer holds them). */
  const partsQueued = (userId: string) =>
    waitFor(
      async () =>
        (
          await db.query(
            `SELECT 1 FROM turn_parts p JOIN turns t ON t.id = p.turn_id
             JOIN contacts c ON c.id = t.contact_id
             WHERE c.user_id = $1 AND p.status = 'queued'`,
            [userId],
          )
        ).length > 0,
    );
  const sentTo = (address: string) =>
    platform.accepted.filter((a) => a.message.to === address || a.message.recipient === address);

  beforeAll(async () => {
    db = await TestDatabase.create();
    platform = await FakePlatform.start();
    agent = await FakeAgent.start();
    service = await startTestApp({
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
      PLATFORM_APP_SECRET: APP_SECRET,
      AGENT_MODULE_URL: agent.url,
      AGENT_TYPING_INDICATOR: 'false',
      MESSAGE_BUFFER_DELAY: '0.2',
      // A platform answer held by a test is not a timeout.
      PLATFORM_TIMEOUT_MS: '15000',
      // The person's sends below must not pause the agent for the next case's contact.
      HANDOFF_AUTO_PAUSE_S: '0',
    });
    const jwt = await adminToken(service.url);
    const instanceId = await createInstance(service.url, jwt, PHONE_NUMBER_ID);
    key = await createApiKey(service.url, jwt, instanceId, 'rekey');
    target = {
      url: `${service.url}/webhooks/messenger`,
      appSecret: APP_SECRET,
      phoneNumberId: PHONE_NUMBER_ID,
    };
  });

  afterAll(async () => {
    await service?.close();
    await agent?.stop();
    await platform?.stop();
    await db?.drop();
  });

  beforeEach(() => {
    agent.reset();
    platform.reset();
  });

  it("the agent's reply goes to the user id the customer changed to while it was answering", async () => {
    const oldId = 'BR.REPLYOLD0001';
    const newId = 'BR.REPLYNEW0001';
    const held = gate();
    agent.answerNext({ release: held.promise, body: { reply: 'Seu pedido saiu.' } });
    await simulateMessage(target, { userId: oldId, name: 'Iara' }, 'cadê meu pedido?');
    await waitFor(() => agent.calls.length === 1);

    await userIdChanged(oldId, newId);
    await rekeyed(newId);
    held.open();

    await waitFor(() => sentTo(newId).length === 1);
    expect(sentTo(newId)[0].message).toMatchObject({
      recipient: newId,
      text: { body: 'Seu pedido saiu.' },
    });
    expect(sentTo(oldId)).toEqual([]);
  });

  it('a reply part the pacer holds goes to the user id the customer changed to while it waited', async () => {
    const oldId = 'BR.PACEDOLD0001';
    const newId = 'BR.PACEDNEW0001';
    const held = gate();
    agent.answerNext({ release: held.promise, body: { reply: 'Já está a caminho.' } });
    await simulateMessage(target, { userId: oldId, name: 'Caio' }, 'e o pedido?');
    await waitFor(() => agent.calls.length === 1);

    const release = await holdSends(service, PHONE_NUMBER_ID);
    held.open();
    await partsQueued(oldId);
    await userIdChanged(oldId, newId);
    await rekeyed(newId);
    await release();

    await waitFor(() => sentTo(newId).length === 1);
    expect(sentTo(newId)[0].message).toMatchObject({
      recipient: newId,
      text: { body: 'Já está a caminho.' },
    });
    expect(sentTo(oldId)).toEqual([]);
  });

  it("the agent's reply goes to the number the customer changed to while it was answering", async () => {
    const oldNumber = '5511955560001';
    const newNumber = '5511955560002';
    const held = gate();
    agent.answerNext({ release: held.promise, body: { reply: 'Anotado.' } });
    await simulateMessage(target, { waId: oldNumber, name: 'Joel' }, 'troquei de número');
    await waitFor(() => agent.calls.length === 1);

    await numberChanged(oldNumber, newNumber);
    await rekeyed(newNumber);
    held.open();

    await waitFor(() => sentTo(newNumber).length === 1);
    expect(sentTo(newNumber)[0].message).toMatchObject({ to: newNumber });
    expect(sentTo(oldNumber)).toEqual([]);
  });

  it('a /send the platform asks to retry goes to the new user id when the customer changed it meanwhile', async () => {
    const oldId = 'BR.SENDOLD00001';
    const newId = 'BR.SENDNEW00001';
    await simulateMessage(target, { userId: oldId, name: 'Lia' }, 'oi');
    await waitFor(() => sentTo(oldId).length === 1); // the agent's echo
    platform.reset();

    const held = gate();
    platform.on(
      'POST',
      /\/messages$/,
      { status: 503, body: { error: { message: 'busy', code: 2 } }, release: held.promise },
      () => undefined,
    );
    const sending = http<{ wamid: string }>(service.url, 'POST', '/send/text', {
      token: key,
      body: { recipient: oldId, body: 'Olá, Lia!' },
    });
    await waitFor(() => platform.sentMessages().length === 1);
    await userIdChanged(oldId, newId);
    await rekeyed(newId);
    held.open();

    const sent = await sending;
    expect(sent.status).toBe(200);
    expect(platform.sentMessages().map((m) => m.recipient)).toEqual([oldId, newId]);
    expect(sentTo(newId)).toHaveLength(1);
    const stored = await http(service.url, 'GET', `/messages/${sent.body.wamid}`, { token: key });
    expect(stored.body).toMatchObject({ contact: newId, user_id: newId });
  });

  it('a /send the platform asks to retry goes to the new number when the customer changed it meanwhile', async () => {
    const oldNumber = '5511955560011';
    const newNumber = '5511955560012';
    await simulateMessage(target, { waId: oldNumber, name: 'Rui' }, 'oi');
    await waitFor(() => sentTo(oldNumber).length === 1);
    platform.reset();

    const held = gate();
    platform.on(
      'POST',
      /\/messages$/,
      { status: 429, headers: { 'retry-after': '0' }, release: held.promise },
      () => undefined,
    );
    const sending = http<{ wamid: string }>(service.url, 'POST', '/send/text', {
      token: key,
      body: { to: oldNumber, body: 'Olá, Rui!' },
    });
    await waitFor(() => platform.sentMessages().length === 1);
    await numberChanged(oldNumber, newNumber);
    await rekeyed(newNumber);
    held.open();

    const sent = await sending;
    expect(sent.status).toBe(200);
    expect(platform.sentMessages().map((m) => m.to)).toEqual([oldNumber, newNumber]);
    const stored = await http(service.url, 'GET', `/messages/${sent.body.wamid}`, { token: key });
    expect(stored.body).toMatchObject({ contact: newNumber, wa_id: newNumber });
  });
});
