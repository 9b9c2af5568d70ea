import { FakeAgent } from './support/fake-agent.js';
import {
  FakePlatform,
  deliverSigned,
  envelope,
  platformError,
  simulateMessage,
  simulateStatus,
  type WebhookTarget,
} from './support/fake-platform.js';
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

const PHONE_NUMBER_ID = '106540352200501';

let sequence = 0;
const wamid = () => `wamid.uid${Date.now()}-${++sequence}`;
const now = () => String(Math.floor(Date.now() / 1000));

interface ContactRow {
  id: string;
  wa_id: string | null;
  user_id: string | null;
  username: string | null;
  name: string | null;
  previous_user_ids: string[];
  previous_wa_ids: string[];
}

describe('business-scoped user ids: customers known by number, by user id, or both', () => {
  let db: TestDatabase;
  let platform: FakePlatform;
  let agent: FakeAgent;
  let service: TestApp;
  let instanceId: string;
  let key: string;
  let target: WebhookTarget;

  const deliver = async (value: Record<string, unknown>) => {
    expect(await deliverSigned(target, envelope(target, 'messages', value))).toBe(200);
  };
  const contactsWith = (keyValue: string) =>
    db.query<ContactRow>(
      `SELECT * FROM contacts WHERE instance_id = $1
         AND (wa_id = $2 OR user_id = $2 OR $2 = ANY(previous_user_ids) OR $2 = ANY(previous_wa_ids))`,
      [instanceId, keyValue],
    );
  /** What the contact wrote (the replies sent to it belong to it too). */
  const messagesOf = (contactId: string) =>
    db.query<{ wamid: string }>(
      "SELECT wamid FROM messages WHERE contact_id = $1 AND direction = 'inbound'",
      [contactId],
    );
  const send = (body: Record<string, unknown>, kind = 'text') =>
    http<Record<string, unknown>>(service.url, 'POST', `/send/${kind}`, { token: key, body });

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
      MESSAGE_BUFFER_DELAY: '0.3',
    });
    const jwt = await adminToken(service.url);
    instanceId = await createInstance(service.url, jwt, PHONE_NUMBER_ID);
    key = await createApiKey(service.url, jwt, instanceId, 'uid');
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

  it('serves a user who hides the number: stored, given to the agent, answered through recipient', async () => {
    const user = { userId: 'BR.HIDDEN0001', username: 'ana.s', name: 'Ana' };
    const { wamid: inbound } = await simulateMessage(target, user, 'oi, sem número');
    await waitFor(() => platform.accepted.some((a) => a.message.recipient === user.userId));

    const [call] = agent.calls;
    expect(call.body.contact).toEqual({
      wa_id: null,
      user_id: 'BR.HIDDEN0001',
      parent_user_id: null,
      username: 'ana.s',
      name: 'Ana',
    });
    expect(call.body.messages.map((m) => m.id)).toEqual([inbound]);
    const [reply] = platform.accepted;
    expect(reply.message).toEqual({
      messaging_product: 'messenger',
      recipient_type: 'individual',
      recipient: 'BR.HIDDEN0001',
      type: 'text',
      text: { body: 'echo: oi, sem número' },
    });
    expect(reply.message).not.toHaveProperty('to');

    const stored = await http<Record<string, unknown>>(service.url, 'GET', `/messages/${inbound}`, {
      token: key,
    });
    expect(stored.body).toMatchObject({
      direction: 'inbound',
      contact: 'BR.HIDDEN0001',
      wa_id: null,
      user_id: 'BR.HIDDEN0001',
    });
  });

  it('applies a status that names the recipient by user id', async () => {
    const sent = await send({ recipient: 'BR.HIDDEN0001', body: 'status, please' });
    expect(sent.status).toBe(200);
    const sentWamid = sent.body.wamid as string;
    expect(platform.sentMessages().at(-1)).toMatchObject({ recipient: 'BR.HIDDEN0001' });
    expect(await simulateStatus(target, sentWamid, 'delivered', { userId: 'BR.HIDDEN0001' })).toBe(
      200,
    );
    await waitFor(async () => {
      const answer = await http<{ status: string }>(service.url, 'GET', `/messages/${sentWamid}`, {
        token: key,
      });
      return answer.body.status === 'delivered';
    });
    const stored = await http(service.url, 'GET', `/messages/${sentWamid}`, { token: key });
    expect(stored.body).toMatchObject({
      direction: 'outbound',
      contact: 'BR.HIDDEN0001',
      wa_id: null,
      user_id: 'BR.HIDDEN0001',
    });
  });

  it('keeps one contact for a person seen by number, then with a user id, then by user id alone', async () => {
    const waId = '5511955550001';
    const userId = 'BR.LINKED0001';
    await simulateMessage(target, { waId, name: 'Caio' }, 'first, by number');
    await waitFor(() => agent.calls.length === 1);
    await simulateMessage(target, { waId, userId, name: 'Caio' }, 'second, both keys');
    await waitFor(() => agent.calls.length === 2);
    await simulateMessage(target, { userId, username: 'caio', name: 'Caio' }, 'third, hidden');
    await waitFor(() => agent.calls.length === 3);

    const contacts = await contactsWith(userId);
    expect(contacts).toHaveLength(1);
    expect(contacts[0]).toMatchObject({ wa_id: waId, user_id: userId, username: 'caio' });
    expect(await contactsWith(waId)).toHaveLength(1);
    expect(await messagesOf(contacts[0].id)).toHaveLength(3);
    // The number is still known, so the answers go to it.
    expect(agent.calls[2].body.contact).toMatchObject({ wa_id: waId, user_id: userId });
    await waitFor(() => platform.accepted.length === 3);
    expect(platform.accepted.map((a) => a.message.to)).toEqual([waId, waId, waId]);
  });

  it('merges a person first seen by user id alone and by number alone, once a message names both', async () => {
    const waId = '5511955550002';
    const userId = 'BR.MERGED0001';
    await simulateMessage(target, { userId, name: 'Dora' }, 'hidden first');
    await simulateMessage(target, { waId, name: 'Dora' }, 'by number');
    await waitFor(() => agent.calls.length === 2);
    expect((await contactsWith(userId))[0].id).not.toBe((await contactsWith(waId))[0].id);

    await simulateMessage(target, { waId, userId, name: 'Dora' }, 'both keys');
    await waitFor(() => agent.calls.length === 3);
    const [merged, ...others] = await contactsWith(userId);
    expect(others).toEqual([]);
    expect(merged).toMatchObject({ wa_id: waId, user_id: userId });
    expect(await messagesOf(merged.id)).toHaveLength(3);
  });

  it('re-keys a contact on user_changed_user_id, keeping its history', async () => {
    const oldId = 'BR.BEFORE0001';
    const newId = 'BR.AFTER00001';
    await simulateMessage(target, { userId: oldId, name: 'Eva' }, 'before the change');
    await waitFor(() => agent.calls.length === 1);
    const [before] = await contactsWith(oldId);

    const change = wamid();
    await deliver({
      messages: [
        {
          from_user_id: newId,
          id: change,
          timestamp: now(),
          type: 'system',
          system: {
            body: 'User Eva changed their user id',
            type: 'user_changed_user_id',
            previous_user_id: oldId,
            user_id: newId,
          },
        },
      ],
    });
    // The change is applied before the user writes under the new id (deliveries taken
    // concurrently could otherwise store that message first, under a contact of its own).
    await waitFor(async () => (await contactsWith(newId)).length === 1);
    await simulateMessage(target, { userId: newId, name: 'Eva' }, 'after the change');
    await waitFor(() => agent.calls.length === 2);

    const [after, ...others] = await contactsWith(newId);
    expect(others).toEqual([]);
    expect(after).toMatchObject({ id: before.id, user_id: newId, previous_user_ids: [oldId] });
    expect((await messagesOf(after.id)).map((m) => m.wamid)).toContain(change);
    expect(await messagesOf(after.id)).toHaveLength(3);
    // The system message is history, not something the user said to the agent.
    expect(agent.calls[1].body.messages.map((m) => m.text)).toEqual(['after the change']);
    expect(agent.calls[1].body.contact).toMatchObject({ user_id: newId });
    await waitFor(() => platform.accepted.some((a) => a.message.recipient === newId));
  });

  it('refuses a user id in to, both keys, or neither, before anything goes upstream', async () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [
        { to: 'BR.HIDDEN0001', body: 'x' },
        'to',
        'is a business-scoped user id: send it as recipient, not to',
      ],
      [
        { to: '5511955550001', recipient: 'BR.HIDDEN0001', body: 'x' },
        'recipient',
        'give either to or recipient, not both',
      ],
      [{ body: 'x' }, 'to', 'is required: give to (a number) or recipient (a user id)'],
      [
        { recipient: 'not-a-user-id', body: 'x' },
        'recipient',
        'must be a user id like BR.1234567890ABCDEF',
      ],
    ];
    for (const [body, field, message] of cases) {
      const answer = await send(body);
      expect({ body, status: answer.status, details: answer.body.details }).toEqual({
        body,
        status: 400,
        details: [{ field, message }],
      });
    }
    expect(platform.sentMessages()).toHaveLength(0);
  });

  it('answers 422 with a hint when a type cannot go to a user id (131062)', async () => {
    platform.on(
      'POST',
      /\/messages$/,
      platformError(
        131062,
        'Business-scoped user ID recipients are not supported for this message',
      ),
    );
    const answer = await send(
      { recipient: 'BR.HIDDEN0001', template_name: 'otp_one_tap', language: 'en' },
      'template',
    );
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({
      code: 'platform_rejected',
      message:
        'This message type cannot be sent to a user id (recipient): send it to the phone number (to)',
      details: [{ code: 131062 }],
    });
  });

  it('holds the service window and pacing for a contact known by user id', async () => {
    const stranger = await send({ recipient: 'BR.NEVERWROTE1', body: 'hello?' });
    expect(stranger.status).toBe(422);
    expect(stranger.body).toMatchObject({ code: 'service_window_closed' });

    // The platform says this user gets too many messages: their sends are spaced
    // (the next waits its turn), while another recipient of the number is not held back.
    const paced = 'BR.PACED000001';
    await simulateMessage(target, { userId: paced, name: 'Gil' }, 'open my window');
    await waitFor(() => platform.accepted.some((a) => a.message.recipient === paced));
    let refusedOnce = false;
    // Before the refusal: the 6 s the user is spaced by count from it.
    const started = Date.now();
    platform.on('POST', /\/messages$/, (request) => {
      if ((request.body as { recipient?: string }).recipient !== paced || refusedOnce) {
        return undefined;
      }
      refusedOnce = true;
      return platformError(131056, 'Pair rate limit hit');
    });
    const refused = await send({ recipient: paced, body: 'one' });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('6');
    expect((await send({ to: '5511955550001', body: 'another user' })).status).toBe(200);
    const spaced = await send({ recipient: paced, body: 'two' });
    expect(spaced.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(4500);
  });
});
