import { Redis } from 'ioredis';
import { WEBHOOK_STREAM } from '../src/queue/queues.js';
import { webhookSignature } from './support/fake-platform.js';
import {
  APP_SECRET,
  VERIFY_TOKEN,
  adminToken,
  createInstance,
  freePort,
  http,
  startTestApp,
  useTestService,
  type TestApp,
} from './support/test-app.js';

const ROTATED = 'test-app-secret-2';

describe('webhook: verification and durable acknowledgement', () => {
  // An api process only: what it acknowledged stays in the stream for the test to read.
  const context = useTestService({
    env: { PLATFORM_APP_SECRET: `${APP_SECRET},${ROTATED}`, APP_ROLE: 'api' },
  });
  let service: TestApp;
  let redis: Redis;

  const post = (body: string, signature?: string) =>
    http(service.url, 'POST', '/webhooks/messenger', {
      rawBody: body,
      headers: signature ? { 'x-hub-signature-256': signature } : {},
    });
  /** The bodies written to the deliveries stream, as the workers will read them. */
  const stored = async () =>
    (await redis.xrange(`${service.config.REDIS_PREFIX}:${WEBHOOK_STREAM}`, '-', '+')).map(
      ([, fields]) => fields[fields.indexOf('b') + 1],
    );

  beforeAll(() => {
    service = context.service;
    redis = new Redis('redis://127.0.0.1:6379');
  });

  afterAll(() => redis.quit());

  describe('GET (subscription check)', () => {
    const verify = (token: string, mode = 'subscribe') =>
      http(
        service.url,
        'GET',
        `/webhooks/messenger?hub.mode=${mode}&hub.verify_token=${encodeURIComponent(token)}&hub.challenge=1158201444`,
      );

    it('echoes the challenge as plain text for the configured verify token', async () => {
      const answer = await verify(VERIFY_TOKEN);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(answer.text).toBe('1158201444');
    });

    it("accepts an instance's own webhook_verify_token", async () => {
      const token = await adminToken(service.url);
      const id = await createInstance(service.url, token, '800000000001');
      const detail = await http<{ webhook_verify_token: string }>(
        service.url,
        'GET',
        `/admin/instances/${id}`,
        {
          token,
        },
      );
      const answer = await verify(detail.body.webhook_verify_token);
      expect(answer.status).toBe(200);
      expect(answer.text).toBe('1158201444');
    });

    it('answers 403 invalid_verify_token for a wrong token or mode', async () => {
      for (const answer of [
        await verify('wrong-token'),
        await verify(VERIFY_TOKEN, 'unsubscribe'),
      ]) {
        expect(answer.status).toBe(403);
        expect(answer.body).toMatchObject({ code: 'invalid_verify_token' });
      }
    });
  });

  describe('POST (deliveries)', () => {
    it('stores a validly signed delivery before answering 200 {status: ok}', async () => {
      const body = JSON.stringify({
        object: 'messenger_business_account',
        entry: [{ id: 'ok-1', changes: [] }],
      });
      const answer = await post(body, webhookSignature(body, APP_SECRET));
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ status: 'ok' });
      expect(await stored()).toContain(body);
    });

    it('checks the raw bytes, not re-serialised JSON (escapes, spacing, non-ASCII)', async () => {
      const body =
        '{ "object":"messenger_business_account",  "entry":[{"id":"raw-2","changes":[],"note":"caf\\u00e9 – São Paulo 👋"}] }';
      expect(JSON.stringify(JSON.parse(body))).not.toBe(body);
      const answer = await post(body, webhookSignature(body, APP_SECRET));
      expect(answer.status).toBe(200);
      expect(await stored()).toContain(body);
    });

    it('accepts every configured secret (rotation)', async () => {
      const body = JSON.stringify({
        object: 'messenger_business_account',
        entry: [{ id: 'rotated-3' }],
      });
      expect((await post(body, webhookSignature(body, ROTATED))).status).toBe(200);
    });

    it('answers 401 invalid_signature and keeps nothing for a wrong or missing signature', async () => {
      const body = JSON.stringify({
        object: 'messenger_business_account',
        entry: [{ id: 'forged-4' }],
      });
      const before = (await stored()).length;
      for (const signature of [
        undefined,
        webhookSignature(body, 'another-secret'),
        'sha256=deadbeef',
        webhookSignature(`${body} `, APP_SECRET),
      ]) {
        const answer = await post(body, signature);
        expect(answer.status).toBe(401);
        expect(answer.body).toMatchObject({ code: 'invalid_signature' });
      }
      expect((await stored()).length).toBe(before);
    });

    it('checks the signature before the body is read as JSON, which it never is here', async () => {
      const junk = '{"object": not json';
      const unsigned = await post(junk);
      expect(unsigned.status).toBe(401);
      expect(unsigned.body).toMatchObject({ code: 'invalid_signature' });
      // Signed by the platform: answering 400 would only make it deliver the same bytes
      // again. Kept as received; the worker that reads it counts it invalid.
      const signed = await post(junk, webhookSignature(junk, APP_SECRET));
      expect(signed.status).toBe(200);
      expect(await stored()).toContain(junk);
    });

    it('answers 503 when the delivery cannot be stored (Redis down), rather than hang', async () => {
      const noRedis = await startTestApp({
        DATABASE_URL: context.db.url,
        PLATFORM_API_URL: context.platform.url,
        PLATFORM_APP_SECRET: APP_SECRET,
        REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
      });
      try {
        const body = JSON.stringify({ object: 'messenger_business_account', entry: [] });
        const down = await http(noRedis.url, 'POST', '/webhooks/messenger', {
          rawBody: body,
          headers: { 'x-hub-signature-256': webhookSignature(body, APP_SECRET) },
        });
        expect(down.status).toBe(503);
        expect(down.body).toMatchObject({ code: 'unavailable' });
      } finally {
        await noRedis.close();
      }
    });
  });
});
