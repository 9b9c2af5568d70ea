import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { section } from './support/markdown.js';
import { EventReceiver, type ReceivedEvent } from './support/event-receiver.js';
import { FakeAgent } from './support/fake-agent.js';
import {
  deliverSigned,
  envelope,
  platformError,
  simulateStatus,
  simulateTemplateEvent,
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

const PHONE_NUMBER_ID = '106540352277001';
const ACCOUNT = '102290129377001';
const ALL_TYPES = [
  'message.received',
  'message.status',
  'message.sent',
  'template.status',
  'turn.failed',
  'instance.status',
];

interface Subscription {
  id: string;
  secret: string;
  enabled: boolean;
  disabled_reason: string | null;
}

interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  state: string;
  attempts: number;
  last_status: number | null;
  last_response: string | null;
  last_error: string | null;
  next_attempt_at: string | null;
}

let sequence = 0;

describe('client event forwarding', () => {
  const context = useTestService({
    agent: true,
    env: {
      MESSAGE_BUFFER_DELAY: '0.1',
      MESSAGE_BUFFER_MAX_WAIT: '0.5',
      AGENT_RETRY_MAX_S: '0',
      EVENT_POLL_MS: '50',
      EVENT_RETRY_SCHEDULE_S: '0.3,0.3,0.3',
      EVENT_SUBSCRIPTIONS_MAX: '3',
      EVENT_DISABLE_AFTER_S: '2',
    },
  });
  let service: TestApp;
  let platform: FakePlatform;
  let db: TestDatabase;
  let agent: FakeAgent;
  let receiver: EventReceiver;
  let token: string;
  let instanceId: string;
  let apiKey: string;

  const target = (): WebhookTarget => ({
    url: `${service.url}/webhooks/messenger`,
    appSecret: APP_SECRET,
    phoneNumberId: PHONE_NUMBER_ID,
    channelAccountId: ACCOUNT,
  });
  const admin = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
    http<T>(service.url, method, path, { token, body });
  const subscribe = async (body: Record<string, unknown> = {}): Promise<Subscription> => {
    const answer = await admin<Subscription>('POST', '/admin/event-subscriptions', {
      url: receiver.url,
      event_types: ALL_TYPES,
      ...body,
    });
    expect(answer.status).toBe(201);
    return answer.body;
  };
  /** Inbound text messages, one delivery; their wamids. */
  const inbound = async (from: string, ...texts: string[]): Promise<string[]> => {
    const wamids = texts.map(() => `wamid.events${++sequence}`);
    const status = await deliverSigned(
      target(),
      envelope(target(), 'messages', {
        contacts: [{ profile: { name: `User ${from}` }, wa_id: from }],
        messages: texts.map((text, i) => ({
          from,
          id: wamids[i],
          timestamp: String(Math.floor(Date.now() / 1000)),
          type: 'text',
          text: { body: text },
        })),
      }),
    );
    expect(status).toBe(200);
    return wamids;
  };
  const deliveries = async (subscriptionId: string, query = '') =>
    (
      await admin<{ data: Delivery[]; next_cursor: string | null }>(
        'GET',
        `/admin/event-subscriptions/${subscriptionId}/deliveries${query}`,
      )
    ).body;
  /** Every request verified by an independent Standard Webhooks implementation. */
  const verified = (secret: string, received: ReceivedEvent[]) =>
    received.map((r) => {
      const payload = new Webhook(secret).verify(r.body, {
        'webhook-id': String(r.headers['webhook-id']),
        'webhook-timestamp': String(r.headers['webhook-timestamp']),
        'webhook-signature': String(r.headers['webhook-signature']),
      });
      expect(r.headers['webhook-id']).toBe(r.event.id);
      return payload;
    });
  const wamidOf = (r: ReceivedEvent) => (r.event.data.message as { wamid: string }).wamid;

  beforeAll(async () => {
    ({ service, platform, db, agent } = context);
    receiver = await EventReceiver.start();
    token = await adminToken(service.url);
    instanceId = await createInstance(service.url, token, PHONE_NUMBER_ID, 'Events store', {
      channelAccountId: ACCOUNT,
    });
    apiKey = await createApiKey(service.url, token, instanceId, 'events');
  });

  afterEach(async () => {
    const list = await admin<Array<{ id: string }>>('GET', '/admin/event-subscriptions');
    for (const { id } of list.body) await admin('DELETE', `/admin/event-subscriptions/${id}`);
    receiver.reset();
    agent.reset();
    platform.reset();
  });

  afterAll(async () => {
    await receiver?.stop();
  });

  it('manages subscriptions: the secret is shown once, targets are checked, a scope has a limit', async () => {
    const created = await subscribe({ description: 'CRM', instance_id: instanceId });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created).toMatchObject({ enabled: true, instance_id: instanceId, description: 'CRM' });

    const listed = await admin<Array<Record<string, unknown>>>('GET', '/admin/event-subscriptions');
    expect(listed.body).toHaveLength(1);
    expect(listed.text).not.toContain(created.secret);
    expect(listed.body[0]).not.toHaveProperty('secret');
    const [stored] = await db.query<{ secret_encrypted: string }>(
      'SELECT secret_encrypted FROM event_subscriptions WHERE id = $1',
      [created.id],
    );
    expect(stored.secret_encrypted).not.toContain(created.secret.slice(6));

    const patched = await admin('PATCH', `/admin/event-subscriptions/${created.id}`, {
      event_types: ['message.received'],
      enabled: false,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      event_types: ['message.received'],
      enabled: false,
      disabled_reason: 'disabled by an admin',
    });

    // Refused targets: not a URL, http to another host, private and metadata addresses.
    for (const [url, why] of [
      ['not a url', /not a URL/],
      ['http://93.184.216.34/hook', /http is allowed for localhost \(or EVENT_TARGET_ALLOWLIST/],
      ['https://10.1.2.3/hook', /private address 10\.1\.2\.3/],
      ['https://169.254.169.254/latest/meta-data', /linkLocal address/],
      ['https://[fd00::1]/hook', /uniqueLocal address/],
      ['https://100.100.100.200/hook', /carrierGradeNat address/],
      ['ftp://127.0.0.1/hook', /https URL/],
    ] as const) {
      const refused = await admin<{ code: string; message: string }>(
        'POST',
        '/admin/event-subscriptions',
        { url, event_types: ['message.received'] },
      );
      expect(refused.status).toBe(422);
      expect(refused.body.code).toBe('event_target_refused');
      expect(refused.body.message).toMatch(why);
    }

    const invalid = await admin<{ code: string; details: Array<{ field: string }> }>(
      'POST',
      '/admin/event-subscriptions',
      { url: receiver.url, event_types: ['message.seen'], secret: 'mine' },
    );
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe('validation_failed');
    expect(invalid.body.details.map((d) => d.field).sort()).toEqual(['event_types', 'secret']);

    const unknownInstance = await admin<{ code: string }>('POST', '/admin/event-subscriptions', {
      url: receiver.url,
      event_types: ['message.received'],
      instance_id: '3f0c9a8e-4b7d-4c1e-9a55-0d2b6f1e7c42',
    });
    expect(unknownInstance.body.code).toBe('instance_not_found');

    await subscribe({ instance_id: instanceId });
    await subscribe({ instance_id: instanceId });
    const over = await admin<{ code: string }>('POST', '/admin/event-subscriptions', {
      url: receiver.url,
      event_types: ['message.received'],
      instance_id: instanceId,
    });
    expect(over.status).toBe(409);
    expect(over.body.code).toBe('event_subscription_limit');
    // The all-instances scope counts on its own.
    await subscribe();

    expect((await admin('DELETE', `/admin/event-subscriptions/${created.id}`)).status).toBe(200);
    const gone = await admin<{ code: string }>('GET', `/admin/event-subscriptions/${created.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe('event_subscription_not_found');
  });

  it('delivers every event type, signed by the Standard Webhooks specification', async () => {
    const subscription = await subscribe();
    const customer = '5511900070001';
    const unlucky = '5511900070002';
    agent.answerAlways((call) =>
      (call.body.contact as { wa_id?: string }).wa_id === unlucky
        ? { status: 400, body: { error: 'cannot answer' } }
        : { body: { reply: `echo: ${call.body.text}` } },
    );

    // message.received, then the agent's answer: message.sent by the agent.
    const [wamid] = await inbound(customer, 'Oi, tudo bem?');
    const received = await readUntil(
      () => receiver.ofType('message.received'),
      (events) => events.length >= 1,
    );
    expect(received[0].event).toMatchObject({
      type: 'message.received',
      instance_id: instanceId,
      data: {
        message: {
          wamid,
          direction: 'inbound',
          wa_id: customer,
          type: 'text',
          status: 'received',
          content: { text: { body: 'Oi, tudo bem?' } },
        },
        contact: { wa_id: customer, name: `User ${customer}` },
      },
    });
    const byAgent = await readUntil(
      () => receiver.ofType('message.sent'),
      (events) => events.length >= 1,
    );
    expect(byAgent[0].event.data).toMatchObject({
      sent_by: 'agent',
      message: { direction: 'outbound', wa_id: customer, status: 'sent' },
    });

    // A client's send: message.sent by the api; then statuses, forward only.
    const sent = await http<{ wamid: string }>(service.url, 'POST', '/send/text', {
      token: apiKey,
      body: { to: customer, body: 'Seu pedido saiu para entrega' },
    });
    expect(sent.status).toBe(200);
    await readUntil(
      () => receiver.ofType('message.sent'),
      (events) => events.length >= 2,
    );
    const bySend = receiver.ofType('message.sent').find((r) => wamidOf(r) === sent.body.wamid);
    expect(bySend?.event.data).toMatchObject({
      sent_by: 'api',
      message: { content: { body: 'Seu pedido saiu para entrega' } },
    });
    // One at a time: statuses of one wamid in the same batch apply as the latest only.
    for (const [n, status] of (['delivered', 'read'] as const).entries()) {
      expect(await simulateStatus(target(), sent.body.wamid, status, { waId: customer })).toBe(200);
      await readUntil(
        () => receiver.ofType('message.status'),
        (events) => events.length >= n + 1,
      );
    }
    // A late "delivered" after "read" changes nothing, so it is no event.
    expect(await simulateStatus(target(), sent.body.wamid, 'delivered', { waId: customer })).toBe(
      200,
    );
    await new Promise((resolve) => setTimeout(resolve, 300)); // a third would have come by now
    const statuses = receiver.ofType('message.status');
    expect(statuses.map((r) => r.event.data.status)).toEqual(['delivered', 'read']);
    expect(statuses[1].event.data).toMatchObject({
      previous_status: 'delivered',
      message: { wamid: sent.body.wamid },
    });

    // template.status, for the instance of the business account.
    expect(await simulateTemplateEvent(target(), 'APPROVED', '990001', 'order_update')).toBe(200);
    const template = await readUntil(
      () => receiver.ofType('template.status'),
      (events) => events.length >= 1,
    );
    expect(template[0].event).toMatchObject({
      instance_id: instanceId,
      data: { template_id: '990001', name: 'order_update', status: 'APPROVED' },
    });

    // turn.failed: the agent refuses this contact's turn.
    await inbound(unlucky, 'Quero cancelar');
    const failed = await readUntil(
      () => receiver.ofType('turn.failed'),
      (events) => events.length >= 1,
    );
    expect(failed[0].event.data).toMatchObject({ contact: { wa_id: unlucky } });
    expect(String(failed[0].event.data.error)).toMatch(/400/);

    // instance.status: the platform refuses the token on a send; activation changes.
    platform.on('POST', /\/messages$/, platformError(190, 'Error validating access token', 401));
    await http(service.url, 'POST', '/send/text', {
      token: apiKey,
      body: { to: customer, body: 'again' },
    });
    const rejected = await readUntil(
      () => receiver.ofType('instance.status'),
      (events) => events.length >= 1,
    );
    expect(rejected[0].event.data).toMatchObject({ status: 'token_rejected', is_active: true });
    const instance = await admin<{ token_rejected_at: string | null }>(
      'GET',
      `/admin/instances/${instanceId}`,
    );
    expect(instance.body.token_rejected_at).not.toBeNull();
    const second = await createInstance(service.url, token, '106540352277002', 'Second');
    await admin('POST', `/admin/instances/${second}/deactivate`);
    const changes = await readUntil(
      () => receiver.ofType('instance.status'),
      (events) => events.length >= 3,
    );
    expect(changes.slice(1).map((r) => [r.event.instance_id, r.event.data.status])).toEqual([
      [second, 'activated'],
      [second, 'deactivated'],
    ]);

    // ping, on request.
    const ping = await admin<{ event_id: string }>(
      'POST',
      `/admin/event-subscriptions/${subscription.id}/test`,
    );
    expect(ping.status).toBe(202);
    await readUntil(
      () => receiver.ofType('ping'),
      (events) => events.length >= 1,
    );
    expect(receiver.ofType('ping')[0].event.id).toBe(ping.body.event_id);

    // Every request carries a valid signature; ids are unique per event.
    const payloads = verified(subscription.secret, receiver.received);
    expect(payloads).toHaveLength(receiver.received.length);
    const ids = receiver.received.map((r) => r.event.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(
        receiver.received[0].body,
        {
          'webhook-id': String(receiver.received[0].headers['webhook-id']),
          'webhook-timestamp': String(receiver.received[0].headers['webhook-timestamp']),
          'webhook-signature': String(receiver.received[0].headers['webhook-signature']),
        },
      ),
    ).toThrow();
  });

  it('retries a failing receiver with backoff until it answers, and shows each attempt', async () => {
    const subscription = await subscribe({ event_types: ['message.received'] });
    let attempts = 0;
    receiver.answer(() =>
      ++attempts <= 3
        ? { status: 500, body: 'database is down' }
        : { status: 200, body: '{"ok":true}' },
    );
    const [wamid] = await inbound('5511900070003', 'hello');
    await waitFor(async () => (await deliveries(subscription.id)).data[0]?.last_status === 500);
    const failing = (await deliveries(subscription.id)).data[0];
    expect(failing).toMatchObject({
      state: 'pending',
      last_status: 500,
      last_response: 'database is down',
    });
    expect(failing.next_attempt_at).not.toBeNull();

    const all = await readUntil(
      () => receiver.received,
      (events) => events.length >= 4,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.received).toHaveLength(4); // once delivered, never again
    expect(new Set(all.map((r) => r.event.id)).size).toBe(1);
    expect(wamidOf(all[3])).toBe(wamid);
    for (let i = 1; i < 4; i++) {
      expect(all[i].at - all[i - 1].at).toBeGreaterThanOrEqual(200); // 0.3 s ± 20 %
    }
    const done = await readUntil(
      async () => (await deliveries(subscription.id)).data[0],
      (delivery) => delivery.state === 'delivered',
    );
    expect(done).toMatchObject({ attempts: 4, last_status: 200, next_attempt_at: null });
  });

  it("keeps a contact's events in order while one is retried, and lets other contacts go on", async () => {
    await subscribe({ event_types: ['message.received'], instance_id: instanceId });
    const failFirst = new Set<string>();
    const attempts = new Map<string, number>();
    receiver.answer((r) => {
      const wamid = wamidOf(r);
      attempts.set(wamid, (attempts.get(wamid) ?? 0) + 1);
      return failFirst.has(wamid) && attempts.get(wamid)! <= 2 ? { status: 503 } : {};
    });
    failFirst.add(`wamid.events${sequence + 1}`); // the first message inbound() names next
    const [a1, a2, a3] = await inbound('5511900070004', 'a1', 'a2', 'a3');
    const [b1] = await inbound('5511900070005', 'b1');
    expect(failFirst.has(a1)).toBe(true);

    const all = await readUntil(
      () => receiver.received.map(wamidOf),
      (wamids) => wamids.length >= 6,
    );
    // a1 twice refused, then a1, a2, a3 in order; b1 did not wait for a1.
    const a1Success = all.indexOf(a1, all.indexOf(a1, all.indexOf(a1) + 1) + 1);
    expect(all.filter((w) => w === a1)).toHaveLength(3);
    expect(all.filter((w) => w !== b1).slice(2)).toEqual([a1, a2, a3]);
    expect(all.indexOf(a2)).toBeGreaterThan(a1Success);
    expect(all.indexOf(b1)).toBeLessThan(a1Success);
  });

  it('honours Retry-After on 429', async () => {
    await subscribe({ event_types: ['message.received'] });
    let attempts = 0;
    receiver.answer(() =>
      ++attempts === 1 ? { status: 429, headers: { 'retry-after': '2' } } : {},
    );
    await inbound('5511900070006', 'slow down');
    const all = await readUntil(
      () => receiver.received,
      (events) => events.length >= 2,
      15_000,
    );
    // At least the 2 s asked for (measured from the first attempt's arrival, before its answer).
    expect(all[1].at - all[0].at).toBeGreaterThanOrEqual(1900);
  });

  it('a 410 Gone disables the subscription; enabling it sends what waited', async () => {
    const subscription = await subscribe({ event_types: ['message.received'] });
    receiver.answer(() => ({ status: 410 }));
    const [first] = await inbound('5511900070007', 'one');
    const disabled = await readUntil(
      async () =>
        (await admin<Subscription>('GET', `/admin/event-subscriptions/${subscription.id}`)).body,
      (s) => !s.enabled,
    );
    expect(disabled.disabled_reason).toMatch(/410 Gone/);
    const metrics = await http(service.url, 'GET', '/metrics');
    expect(metrics.text).toMatch(/event_subscriptions_disabled_total\{reason="gone"\} 1/);

    // While disabled: new events are not queued for it, the waiting one stays.
    await inbound('5511900070007', 'two');
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(receiver.received).toHaveLength(1);
    expect((await deliveries(subscription.id)).data).toHaveLength(1);

    receiver.answer(() => ({}));
    await admin('PATCH', `/admin/event-subscriptions/${subscription.id}`, { enabled: true });
    await readUntil(
      () => receiver.received,
      (events) => events.length >= 2,
    );
    expect(wamidOf(receiver.received[1])).toBe(first);
    // The receipt comes before its record: read until it is written.
    const page = await readUntil(
      () => deliveries(subscription.id),
      (list) => list.data[0]?.state === 'delivered',
    );
    expect(page.data.map((d) => d.state)).toEqual(['delivered']);
  });

  it('disables a subscription whose deliveries all failed for EVENT_DISABLE_AFTER_S', async () => {
    const subscription = await subscribe({ event_types: ['message.received'] });
    receiver.answer(() => ({ status: 500 }));
    const started = Date.now();
    let n = 0;
    const disabled = await readUntil(
      async () => {
        // A new contact each time: each fails on its own, none waits behind another.
        if (Date.now() - started > 400 * n)
          await inbound(`55119000710${String(n++).padStart(2, '0')}`, 'x');
        return (await admin<Subscription>('GET', `/admin/event-subscriptions/${subscription.id}`))
          .body;
      },
      (s) => !s.enabled,
      20_000,
      100,
    );
    // Not before EVENT_DISABLE_AFTER_S (2 s) of failures, all of which came after `started`.
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    expect(disabled.disabled_reason).toMatch(/^every delivery failed since /);
    // Counted once the disable is stored: the API may show it a moment before the count.
    const counted = /event_subscriptions_disabled_total\{reason="failing"\} 1/;
    const metrics = await readUntil(
      async () => (await http(service.url, 'GET', '/metrics')).text,
      (text) => counted.test(text),
    );
    expect(metrics).toMatch(counted);
  });

  it('retries a failed delivery on request, and replays a time range with the same ids', async () => {
    const since = new Date().toISOString();
    const subscription = await subscribe({ event_types: ['message.received'] });
    receiver.answer(() => ({ status: 500 }));
    const [wamid] = await inbound('5511900070008', 'lost?');
    // 1 attempt and 3 retries, then the delivery fails.
    const failed = await readUntil(
      async () => (await deliveries(subscription.id, '?state=failed')).data,
      (list) => list.length === 1,
    );
    expect(failed[0]).toMatchObject({ attempts: 4, last_status: 500, next_attempt_at: null });
    expect(receiver.received).toHaveLength(4);

    receiver.answer(() => ({}));
    const retried = await admin<Delivery>('POST', `/admin/event-deliveries/${failed[0].id}/retry`);
    expect(retried.status).toBe(200);
    expect(retried.body.state).toBe('pending');
    await readUntil(
      async () => (await deliveries(subscription.id)).data[0].state,
      (state) => state === 'delivered',
    );
    expect(wamidOf(receiver.received[4])).toBe(wamid);

    const [second] = await inbound('5511900070008', 'another');
    await readUntil(
      () => receiver.received,
      (events) => events.length >= 6,
    );
    const before = receiver.received.slice(4).map((r) => r.event.id);
    const replay = await admin<{ queued: number }>(
      'POST',
      `/admin/event-subscriptions/${subscription.id}/replay`,
      { since, until: new Date(Date.now() + 1000).toISOString() },
    );
    expect(replay.status).toBe(202);
    expect(replay.body.queued).toBe(2);
    const replayed = await readUntil(
      () => receiver.received.slice(6),
      (events) => events.length >= 2,
    );
    expect(replayed.map((r) => r.event.id)).toEqual(before);
    expect(replayed.map(wamidOf)).toEqual([wamid, second]);
    verified(subscription.secret, replayed);

    // Pages: newest first, a cursor to the rest.
    const first = await deliveries(subscription.id, '?limit=3');
    expect(first.data).toHaveLength(3);
    const rest = await deliveries(subscription.id, `?limit=3&cursor=${first.next_cursor}`);
    expect(rest.data).toHaveLength(1);
    expect(rest.next_cursor).toBeNull();
    const badCursor = await admin<{ code: string }>(
      'GET',
      `/admin/event-subscriptions/${subscription.id}/deliveries?cursor=abc`,
    );
    expect(badCursor.body.code).toBe('validation_failed');
    const missing = await admin<{ code: string }>(
      'POST',
      '/admin/event-deliveries/3f0c9a8e-4b7d-4c1e-9a55-0d2b6f1e7c42/retry',
    );
    expect(missing.body.code).toBe('event_delivery_not_found');
  });

  it('records events only while a subscription wants them: a disabled one keeps them for a replay', async () => {
    const count = async (wamid: string) =>
      (await db.query(`SELECT 1 FROM events WHERE data -> 'message' ->> 'wamid' = $1`, [wamid]))
        .length;
    const since = new Date().toISOString();
    // Nobody subscribed: nothing is written.
    const [unwanted] = await inbound('5511900070011', 'nobody listens');
    await waitFor(
      async () =>
        (await db.query('SELECT 1 FROM messages WHERE wamid = $1', [unwanted])).length > 0,
    );
    // Another type only: still nothing.
    const other = await subscribe({ event_types: ['message.status'] });
    const [otherType] = await inbound('5511900070011', 'not this type');
    await waitFor(
      async () =>
        (await db.query('SELECT 1 FROM messages WHERE wamid = $1', [otherType])).length > 0,
    );
    expect(await count(unwanted)).toBe(0);
    expect(await count(otherType)).toBe(0);
    await admin('DELETE', `/admin/event-subscriptions/${other.id}`);

    // Disabled: recorded, not sent; enabled and replayed, sent.
    const subscription = await subscribe({ event_types: ['message.received'], enabled: false });
    const [kept] = await inbound('5511900070011', 'kept for later');
    await waitFor(async () => (await count(kept)) === 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received).toHaveLength(0);
    await admin('PATCH', `/admin/event-subscriptions/${subscription.id}`, { enabled: true });
    const replay = await admin<{ queued: number }>(
      'POST',
      `/admin/event-subscriptions/${subscription.id}/replay`,
      { since, until: new Date(Date.now() + 1000).toISOString() },
    );
    expect(replay.body.queued).toBe(1);
    const received = await readUntil(
      () => receiver.received,
      (events) => events.length >= 1,
    );
    expect(received.map(wamidOf)).toEqual([kept]);
    verified(subscription.secret, received);
  });

  it('refuses at delivery time a target that now resolves to a private address', async () => {
    const subscription = await subscribe({ event_types: ['message.received'] });
    // As if its name had been re-pointed after the check at creation.
    await db.query(`UPDATE event_subscriptions SET url = 'http://10.255.255.1:9/x' WHERE id = $1`, [
      subscription.id,
    ]);
    await admin('POST', `/admin/event-subscriptions/${subscription.id}/test`);
    const refused = await readUntil(
      async () => (await deliveries(subscription.id)).data[0],
      (delivery) => delivery?.last_error !== null && delivery?.last_error !== undefined,
    );
    expect(refused.last_error).toMatch(/target refused: 10\.255\.255\.1 is a private address/);
    expect(refused.last_status).toBeNull();
  });

  it('signs with the new and the previous secret after a rotation', async () => {
    const subscription = await subscribe({ event_types: ['message.received'] });
    const rotated = await admin<{ secret: string; previous_secret_expires_at: string }>(
      'POST',
      `/admin/event-subscriptions/${subscription.id}/rotate-secret`,
    );
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(subscription.secret);
    expect(Date.parse(rotated.body.previous_secret_expires_at)).toBeGreaterThan(Date.now());
    await admin('POST', `/admin/event-subscriptions/${subscription.id}/test`);
    const [ping] = await readUntil(
      () => receiver.received,
      (events) => events.length >= 1,
    );
    expect(String(ping.headers['webhook-signature']).split(' ')).toHaveLength(2);
    verified(rotated.body.secret, [ping]);
    verified(subscription.secret, [ping]);
  });

  it('counts deliveries and shows the oldest waiting event per subscription', async () => {
    const subscription = await subscribe({ event_types: ['message.received'] });
    receiver.answer(() => ({ status: 500 }));
    await inbound('5511900070009', 'waiting');
    await readUntil(
      () => receiver.received,
      (events) => events.length >= 1,
    );
    const metrics = await http(service.url, 'GET', '/metrics');
    expect(metrics.text).toMatch(/event_deliveries_total\{outcome="delivered"\} [1-9]/);
    expect(metrics.text).toMatch(/event_deliveries_total\{outcome="retry"\} [1-9]/);
    expect(metrics.text).toContain(
      `event_oldest_pending_age_seconds{subscription="${subscription.id}"}`,
    );
    expect(metrics.text).toMatch(/event_delivery_latency_seconds_count [1-9]/);
  });

  it("the README's Node verifier accepts a real delivery and refuses a changed one", async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const code = /```js\n([\s\S]*?)```/.exec(section(readme, '### Events for client systems'))?.[1];
    expect(code).toBeDefined();
    const dir = await mkdtemp(join(tmpdir(), 'verifier-'));
    try {
      const file = join(dir, 'verify.mjs');
      await writeFile(file, code!);
      const { verify } = (await import(pathToFileURL(file).href)) as {
        verify: (secret: string, headers: Record<string, unknown>, body: string) => boolean;
      };
      const subscription = await subscribe({ event_types: ['message.received'] });
      await admin('POST', `/admin/event-subscriptions/${subscription.id}/test`);
      const [ping] = await readUntil(
        () => receiver.received,
        (events) => events.length >= 1,
      );
      expect(verify(subscription.secret, ping.headers, ping.body)).toBe(true);
      expect(verify(subscription.secret, ping.headers, ping.body.replace('test', 'tent'))).toBe(
        false,
      );
      expect(verify(created(), ping.headers, ping.body)).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** Some other subscription's secret. */
function created(): string {
  return `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
}
