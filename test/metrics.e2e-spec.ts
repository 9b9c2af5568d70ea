import { FakeAgent } from './support/fake-agent.js';
import { FakePlatform, deliverSigned, envelope } from './support/fake-platform.js';
import {
  APP_SECRET,
  TestDatabase,
  adminToken,
  createInstance,
  http,
  readUntil,
  startTestApp,
  type TestApp,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352200888';

/** The value of one series (labels given in any order), 0 when absent. */
function value(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) {
      return Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return 0;
}

describe('GET /metrics', () => {
  let db: TestDatabase;
  let platform: FakePlatform;
  let agent: FakeAgent;
  let service: TestApp;
  const scrape = async () => (await http(service.url, 'GET', '/metrics')).text;
  /** One signed delivery of `message` to the number `phoneNumberId`. */
  const deliver = (
    phoneNumberId: string,
    message: Record<string, unknown>,
    appSecret = APP_SECRET,
  ) => {
    const target = { url: `${service.url}/webhooks/messenger`, appSecret, phoneNumberId };
    return deliverSigned(target, envelope(target, 'messages', { messages: [message] }));
  };

  beforeAll(async () => {
    db = await TestDatabase.create();
    platform = await FakePlatform.start();
    agent = await FakeAgent.start();
    service = await startTestApp({
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
      PLATFORM_APP_SECRET: APP_SECRET,
      AGENT_MODULE_URL: agent.url,
      MESSAGE_BUFFER_DELAY: '0.1',
      API_KEY: 'metrics-test-key-0123456789',
    });
    await createInstance(service.url, await adminToken(service.url), PHONE_NUMBER_ID);
  });

  afterAll(async () => {
    await service.close();
    await agent.stop();
    await platform.stop();
    await db.drop();
  });

  it('exposes every named series in Prometheus text, with process metrics', async () => {
    const answer = await http(service.url, 'GET', '/metrics');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/plain/);
    for (const name of [
      'http_requests_total',
      'http_request_duration_seconds_bucket',
      'webhook_deliveries_total',
      'queue_jobs',
      'agent_attempts_total',
      'agent_call_duration_seconds',
      'turns_finished_total',
      'reply_parts_total',
      'turns',
      'oldest_waiting_message_age_seconds',
      'platform_calls_total',
      'platform_call_duration_seconds_bucket',
      'messages_sent_total',
      'process_cpu_user_seconds_total',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(answer.text).toContain(`# TYPE ${name.replace(/_bucket$/, '')} `);
    }
  });

  it('moves the counters when the matching events happen', async () => {
    const before = await scrape();
    await http(service.url, 'GET', '/health/live');
    const from = '5511977770001';
    const message = {
      from,
      id: 'wamid.metrics1',
      timestamp: String(Math.floor(Date.now() / 1000)),
      type: 'text',
      text: { body: 'oi' },
    };
    await deliver(PHONE_NUMBER_ID, message, 'wrong-secret');
    await deliver(PHONE_NUMBER_ID, message);
    await deliver(PHONE_NUMBER_ID, message);
    // A number no instance has.
    await deliver('1', {
      from,
      id: 'wamid.metrics2',
      timestamp: '1',
      type: 'text',
      text: { body: 'x' },
    });
    // The agent answers with an echo, which is sent: an agent call, a platform call, a text
    // sent, and then the turn finishes (a moment after the send).
    const after = await readUntil(
      scrape,
      (text) =>
        value(text, 'messages_sent_total', { type: 'text' }) >= 1 &&
        value(text, 'turns_finished_total', { status: 'done' }) >
          value(before, 'turns_finished_total', { status: 'done' }),
      5000,
      100,
    );
    const moved = (name: string, labels: Record<string, string>) =>
      value(after, name, labels) - value(before, name, labels);
    expect(
      moved('http_requests_total', { method: 'GET', route: '/health/live', status: '200' }),
    ).toBe(1);
    expect(moved('webhook_deliveries_total', { outcome: 'invalid_signature' })).toBe(1);
    expect(moved('webhook_deliveries_total', { outcome: 'accepted' })).toBe(3);
    expect(moved('webhook_deliveries_total', { outcome: 'duplicate' })).toBe(1);
    expect(moved('webhook_deliveries_total', { outcome: 'unrouted' })).toBe(1);
    expect(moved('agent_attempts_total', { outcome: 'ok' })).toBe(1);
    expect(moved('turns_finished_total', { status: 'done' })).toBe(1);
    expect(moved('reply_parts_total', { outcome: 'sent' })).toBe(1);
    expect(after).toMatch(/^oldest_waiting_message_age_seconds 0$/m);
    expect(moved('messages_sent_total', { type: 'text' })).toBe(1);
    expect(
      moved('platform_calls_total', { endpoint: '/{id}/messages', status: '2xx' }),
    ).toBeGreaterThanOrEqual(1);
    expect(after).toMatch(/queue_jobs\{queue="webhook-deliveries",state="waiting"\} \d+/);
    expect(after).toMatch(/queue_jobs\{queue="contact-buffers",state="delayed"\} \d+/);
  });

  it('asks for METRICS_TOKEN when one is set', async () => {
    const guarded = await startTestApp({
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
      METRICS_TOKEN: 'scrape-token-0123456789',
    });
    try {
      expect((await http(guarded.url, 'GET', '/metrics')).status).toBe(401);
      expect(
        (await http(guarded.url, 'GET', '/metrics', { token: 'wrong-token-0123456789' })).status,
      ).toBe(401);
      expect(
        (await http(guarded.url, 'GET', '/metrics', { token: 'scrape-token-0123456789' })).status,
      ).toBe(200);
    } finally {
      await guarded.close();
    }
  });
});
