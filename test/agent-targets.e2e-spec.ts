import { randomBytes } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import { TargetGuard } from '../src/outbound/target-guard.js';
import { FakeAgent } from './support/fake-agent.js';
import { deliverSigned, envelope, type WebhookTarget } from './support/fake-platform.js';
import {
  createInstance,
  freePort,
  http,
  readUntil,
  useTestService,
  waitFor,
} from './support/test-app.js';

const SECRET = randomBytes(24).toString('hex');
const ADMIN_PASSWORD = randomBytes(24).toString('hex');

interface TurnBody {
  id: string;
  instance_id: string;
  status: string;
  attempts: number;
  last_error: string | null;
}

/**
 * Security review, item 10: an instance's own agent URL is an outbound target
 * an admin configures, guarded like an event subscription's. The service runs
 * in production (loopback refused); its resolver is stubbed, so no request
 * and no DNS query leaves the machine; the fake agents listen on loopback.
 */
describe('instance agent URLs: guarded at save and on every connection (production)', () => {
  const context = useTestService({
    env: {
      NODE_ENV: 'production',
      PLATFORM_APP_SECRET: SECRET,
      PLATFORM_VERIFY_TOKEN: randomBytes(24).toString('hex'),
      ADMIN_PASSWORD,
      JWT_SECRET: randomBytes(48).toString('base64'),
      METRICS_TOKEN: randomBytes(24).toString('hex'),
      // The internal agent of this deployment: admitted by the one allow-list of outbound targets.
      EVENT_TARGET_ALLOWLIST: '127.0.0.2',
      MESSAGE_BUFFER_DELAY: '0.1',
      MESSAGE_BUFFER_MAX_WAIT: '1',
      AGENT_TYPING_INDICATOR: 'false',
      AGENT_RETRY_MAX_S: '0',
    },
  });
  /** What the stubbed resolver answers, by name; a test re-points a name as an attacker would. */
  const zone = new Map<string, string[]>([
    ['localhost', ['127.0.0.1', '::1']],
    ['agents.example.com', ['93.184.216.34']],
    ['internal-agent.example.com', ['127.0.0.2']],
  ]);
  let token: string;
  let internal: FakeAgent;
  let open: FakeAgent;
  let numbers = 0;

  beforeAll(async () => {
    [internal, open] = await Promise.all([
      FakeAgent.start({ host: '127.0.0.2' }),
      FakeAgent.start(),
    ]);
    const guard = context.service.app.get(TargetGuard, { strict: false });
    (guard as unknown as { resolve: (host: string) => Promise<LookupAddress[]> }).resolve = (
      host,
    ) => {
      const addresses = zone.get(host);
      if (!addresses) {
        return Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
      }
      return Promise.resolve(
        addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      );
    };
    const login = await http<{ token: string }>(context.service.url, 'POST', '/admin/auth/login', {
      body: { username: 'admin', password: ADMIN_PASSWORD },
    });
    expect(login.status).toBe(200);
    token = login.body.token;
  });

  afterAll(async () => {
    await Promise.all([internal?.stop(), open?.stop()]);
  });

  const newInstance = async (): Promise<{ id: string; number: string }> => {
    const number = `10654035227${String(++numbers).padStart(4, '0')}`;
    return { id: await createInstance(context.service.url, token, number), number };
  };
  const setAgentUrl = (id: string, url: string) =>
    http<{ code: string; message: string; details: Array<{ field: string; message: string }> }>(
      context.service.url,
      'PATCH',
      `/admin/instances/${id}`,
      { token, body: { agent: { url, token: 'instance-agent-token' } } },
    );
  const inbound = async (number: string, from: string, text: string) => {
    const target: WebhookTarget = {
      url: `${context.service.url}/webhooks/messenger`,
      appSecret: SECRET,
      phoneNumberId: number,
    };
    const message = {
      from,
      id: `wamid.targets${randomBytes(6).toString('hex')}`,
      timestamp: String(Math.floor(Date.now() / 1000)),
      type: 'text',
      text: { body: text },
    };
    expect(await deliverSigned(target, envelope(target, 'messages', { messages: [message] }))).toBe(
      200,
    );
  };
  const failedTurn = async (from: string): Promise<TurnBody> => {
    const [turn] = await readUntil(
      async () =>
        (
          await http<{ data: TurnBody[] }>(
            context.service.url,
            'GET',
            `/admin/turns?status=failed&contact=${from}`,
            { token },
          )
        ).body.data,
      (turns) => turns.length === 1,
    );
    return turn;
  };

  it('refuses at save each address of the security review (400 naming agent.url) and admits the allow-listed internal agent', async () => {
    const { id, number } = await newInstance();
    const refused = [
      'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      `http://127.0.0.1:${await freePort()}/`,
      'http://localhost:6379/',
      // IPv4-compatible and other IPv6 forms of loopback and metadata addresses.
      'https://[::127.0.0.1]/',
      'https://[::a9fe:a9fe]/',
      'https://[::ffff:169.254.169.254]/',
      'https://[64:ff9b::a9fe:a9fe]/',
      // A public address, but plain http in production.
      'http://agents.example.com/agent',
    ];
    for (const url of refused) {
      const answer = await setAgentUrl(id, url);
      expect([url, answer.status, answer.body.code]).toEqual([url, 400, 'validation_failed']);
      expect(answer.body.details).toEqual([
        { field: 'agent.url', message: expect.stringMatching(/^is refused: /) },
      ]);
    }
    // Credentials in the URL: refused, and never repeated back.
    const withCredentials = await setAgentUrl(
      id,
      'https://agent-user:agent-pass-4711@agents.example.com/agent',
    );
    expect(withCredentials.status).toBe(400);
    expect(withCredentials.body.details).toEqual([
      { field: 'agent.url', message: expect.stringMatching(/user:password@/) },
    ]);
    expect(withCredentials.text).not.toContain('agent-pass-4711');
    // Nothing of it was saved.
    const detail = await http<{ agent: { url: string | null; token_set: boolean } }>(
      context.service.url,
      'GET',
      `/admin/instances/${id}`,
      { token },
    );
    expect(detail.body.agent).toMatchObject({ url: null, token_set: false });

    // The deployment's own agent, on an address EVENT_TARGET_ALLOWLIST names: taken, plain http too.
    expect((await setAgentUrl(id, 'https://agents.example.com/agent')).status).toBe(200);
    const byName = `http://internal-agent.example.com:${internal.port}/agent`;
    expect((await setAgentUrl(id, byName)).status).toBe(200);
    await inbound(number, '5511955550001', 'hello internal');
    await waitFor(() => internal.callCount === 1);
    expect(internal.calls[0].headers.authorization).toBe('Bearer instance-agent-token');
    await waitFor(() =>
      context.platform.sentMessages().some((m) => m.to === '5511955550001' && m.type === 'text'),
    );
  });

  it('refuses on connection a name that now answers loopback or a private address: nothing is sent, and an open port fails like a closed one', async () => {
    const openPort = open.port;
    const closedPort = await freePort();
    // As if each name had been re-pointed after the check at save (DNS rebinding), or the
    // URL saved before the guard existed.
    const rows: Array<[string, string]> = [
      ['5511955550011', `http://localhost:${openPort}/agent`],
      ['5511955550012', `http://localhost:${closedPort}/agent`],
      ['5511955550013', `https://agents.example.com:${openPort}/agent`],
      ['5511955550014', `http://127.0.0.1:${openPort}/agent`],
      ['5511955550015', `https://agent-user:agent-pass-4711@agents.example.com:${openPort}/agent`],
    ];
    zone.set('agents.example.com', ['10.0.0.5']);
    const instances: Array<{ id: string; number: string }> = [];
    for (const [, url] of rows) {
      const instance = await newInstance();
      await context.db.query(`UPDATE instances SET agent_url = $2 WHERE id = $1`, [
        instance.id,
        url,
      ]);
      instances.push(instance);
    }
    for (const [n, [from]] of rows.entries()) await inbound(instances[n].number, from, 'hi');
    const errors = [];
    for (const [from] of rows) {
      const turn = await failedTurn(from);
      expect(turn.attempts).toBe(1);
      errors.push(turn.last_error);
    }
    expect(errors).toEqual([
      'agent URL refused: localhost resolves to a loopback address 127.0.0.1',
      'agent URL refused: localhost resolves to a loopback address 127.0.0.1',
      'agent URL refused: agents.example.com resolves to a private address 10.0.0.5',
      'agent URL refused: 127.0.0.1 is a loopback address',
      'agent URL refused: it must not carry credentials (user:password@)',
    ]);
    // No call reached the agent listening on the open port.
    expect(open.callCount).toBe(0);

    // A URL with credentials saved before they were refused is shown without them.
    const shown = await http(context.service.url, 'GET', `/admin/instances/${instances[4].id}`, {
      token,
    });
    expect(shown.status).toBe(200);
    expect(shown.text).not.toContain('agent-pass-4711');
    expect(shown.text).not.toContain('agent-user');
  });
});
