import { randomBytes } from 'node:crypto';
import { CryptoService, keyId } from '../src/crypto/crypto.service.js';
import { loadConfig } from '../src/config/load-config.js';
import { EventReceiver, signatureValid } from './support/event-receiver.js';
import { FakePlatform } from './support/fake-platform.js';
import {
  TestDatabase,
  adminToken,
  createApiKey,
  createInstance,
  http,
  startTestApp,
  waitFor,
} from './support/test-app.js';

describe('access tokens at rest', () => {
  let db: TestDatabase;
  let platform: FakePlatform;

  beforeAll(async () => {
    db = await TestDatabase.create();
    platform = await FakePlatform.start();
  });

  afterAll(async () => {
    await platform.stop();
    await db.drop();
  });

  const base = () => ({ DATABASE_URL: db.url, PLATFORM_API_URL: platform.url });
  const keyFor = (url: string, jwt: string, instanceId: string) =>
    createApiKey(url, jwt, instanceId, 'k');

  it("binds each token to its instance: copied onto another instance's row, it is not used", async () => {
    const service = await startTestApp(base());
    try {
      const jwt = await adminToken(service.url);
      const first = await createInstance(service.url, jwt, '106540352201001');
      const second = await createInstance(service.url, jwt, '106540352201002');
      await db.query(
        `UPDATE instances SET access_token_encrypted =
           (SELECT access_token_encrypted FROM instances WHERE id = $1) WHERE id = $2`,
        [first, second],
      );
      platform.reset();
      const key = await keyFor(service.url, jwt, second);
      const answer = await http(service.url, 'GET', '/instance/phone_numbers', { token: key });
      expect(answer.status).toBe(500);
      expect(answer.body).toMatchObject({ code: 'internal_error' });
      expect(platform.requests).toHaveLength(0);
    } finally {
      await service.close();
    }
  });

  it('re-encrypts every secret under the current key at boot, so the old key can be retired', async () => {
    const [oldKey, newKey] = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex')];
    const prefix = `rot${randomBytes(4).toString('hex')}`;
    const receiver = await EventReceiver.start();
    const first = await startTestApp({ ...base(), REDIS_PREFIX: prefix, ENCRYPTION_KEY: oldKey });
    const jwt = await adminToken(first.url);
    const instanceId = await createInstance(first.url, jwt, '106540352201003');
    const apiKey = await keyFor(first.url, jwt, instanceId);
    const agent = await http(first.url, 'PATCH', `/admin/instances/${instanceId}`, {
      token: jwt,
      body: { agent: { token: 'agent-token-at-rest' } },
    });
    expect(agent.status).toBe(200);
    const subscribed = await http<{ id: string; secret: string }>(
      first.url,
      'POST',
      '/admin/event-subscriptions',
      { token: jwt, body: { url: receiver.url, event_types: ['instance.status'] } },
    );
    expect(subscribed.status).toBe(201);
    await first.close();
    const secrets = async () => {
      const [instance] = await db.query<{ access: string; agent: string }>(
        `SELECT access_token_encrypted AS access, agent_token_encrypted AS agent
         FROM instances WHERE id = $1`,
        [instanceId],
      );
      const [subscription] = await db.query<{ secret_encrypted: string }>(
        'SELECT secret_encrypted FROM event_subscriptions WHERE id = $1',
        [subscribed.body.id],
      );
      return [instance.access, instance.agent, subscription.secret_encrypted];
    };
    for (const value of await secrets()) {
      expect(value.split(':')[1]).toBe(keyId(Buffer.from(oldKey, 'hex')));
    }

    const rotating = await startTestApp({
      ...base(),
      REDIS_PREFIX: prefix,
      ENCRYPTION_KEY: newKey,
      ENCRYPTION_PREVIOUS_KEYS: oldKey,
    });
    await rotating.close();
    for (const value of await secrets()) {
      expect(value.split(':').slice(0, 2)).toEqual(['v2', keyId(Buffer.from(newKey, 'hex'))]);
    }

    const retired = await startTestApp({ ...base(), REDIS_PREFIX: prefix, ENCRYPTION_KEY: newKey });
    try {
      const answer = await http(retired.url, 'GET', '/instance/phone_numbers', { token: apiKey });
      expect(answer.status).toBe(200);
      const settings = await http<{ agent: { token_set: boolean } }>(
        retired.url,
        'GET',
        `/admin/instances/${instanceId}`,
        { token: jwt },
      );
      expect(settings.body.agent.token_set).toBe(true);
      // Readable under the new key alone, as it was set.
      const [{ agent_token_encrypted: agentToken }] = await db.query<{
        agent_token_encrypted: string;
      }>('SELECT agent_token_encrypted FROM instances WHERE id = $1', [instanceId]);
      const newKeyOnly = new CryptoService(
        loadConfig({ NODE_ENV: 'test', ENCRYPTION_KEY: newKey }).config,
      );
      expect(newKeyOnly.decrypt(agentToken, instanceId)).toBe('agent-token-at-rest');
      // The subscription still signs with the secret it was given, under the new key only.
      receiver.reset();
      const ping = await http(
        retired.url,
        'POST',
        `/admin/event-subscriptions/${subscribed.body.id}/test`,
        { token: jwt },
      );
      expect(ping.status).toBe(202);
      await waitFor(() => receiver.received.length > 0);
      expect(signatureValid(subscribed.body.secret, receiver.received[0])).toBe(true);
    } finally {
      await retired.close();
      await receiver.stop();
    }
  });
});
