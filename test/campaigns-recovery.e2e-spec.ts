import { startServiceProcess, type ServiceProcess } from './support/service-process.js';
import { FakePlatform } from './support/fake-platform.js';
import {
  TestDatabase,
  adminToken,
  createApiKey,
  createInstance,
  http,
  startTestApp,
  waitFor,
  type TestApp,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352280001';
const RECIPIENTS = 1500;

interface Campaign {
  state: string;
  progress: {
    queued: number;
    sent: number;
    failed: number;
    failed_by_code: Record<string, number>;
  };
}

/**
 * A worker killed with SIGKILL in the middle of a campaign, one of its sends
 * held by the platform at that moment, and another worker started: every
 * recipient gets exactly one platform call, the one caught mid-call included
 * (it ends `failed`, `send_uncertain`, never sent again).
 */
describe('a campaign through a worker killed mid-send', () => {
  let db: TestDatabase;
  let platform: FakePlatform;
  let api: TestApp;
  const workers: ServiceProcess[] = [];

  beforeAll(async () => {
    db = await TestDatabase.create();
    platform = await FakePlatform.start();
  });

  afterAll(async () => {
    for (const worker of workers) await worker.kill();
    await api?.close();
    await platform?.stop();
    await db?.drop();
  });

  it('never sends to a recipient twice: the calls it was making end send_uncertain, the rest are sent by the other worker', async () => {
    const env = {
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
      PLATFORM_SEND_RATE: '1000',
      CAMPAIGN_LEASE_S: '2',
    };
    api = await startTestApp({ ...env, APP_ROLE: 'api' });
    const admin = await adminToken(api.url);
    const instanceId = await createInstance(api.url, admin, PHONE_NUMBER_ID, 'Recovery');
    const key = await createApiKey(api.url, admin, instanceId, 'recovery');
    workers.push(await startServiceProcess({ ...env, APP_ROLE: 'worker' }));
    // The first worker syncs the catalogue the campaign needs.
    await waitFor(async () => {
      const listed = await http<{ data: unknown[] }>(
        api.url,
        'GET',
        '/templates?name=autumn_sale',
        {
          token: key,
        },
      );
      return listed.body.data?.length === 1;
    }, 30_000);

    let hold = false;
    platform.on('POST', /\/messages$/, () => (hold ? { hang: true } : undefined));
    const created = await http<{ id: string }>(api.url, 'POST', '/campaigns', {
      token: key,
      body: {
        name: 'Crash',
        template_name: 'autumn_sale',
        start: true,
        rate_per_s: 300,
        recipients: Array.from({ length: RECIPIENTS }, (_, n) => ({
          to: `55119${String(n).padStart(8, '0')}`,
          parameters: { first_name: `C${n}`, code: 'Z' },
        })),
      },
    });
    expect(created.status).toBe(201);
    const calls = () => platform.callsTo(/\/messages$/).length;
    await waitFor(() => Promise.resolve(calls() >= 300), 60_000);
    // The platform takes the next calls and never answers: the worker dies waiting.
    hold = true;
    const before = calls();
    await waitFor(() => Promise.resolve(calls() > before), 30_000);
    const held = platform
      .callsTo(/\/messages$/)
      .slice(before)
      .map((request) => (request.body as { to: string }).to);
    await workers[0].kill();
    hold = false;

    workers.push(await startServiceProcess({ ...env, APP_ROLE: 'worker' }));
    const campaign = async () =>
      (await http<Campaign>(api.url, 'GET', `/campaigns/${created.body.id}`, { token: key })).body;
    await waitFor(async () => (await campaign()).state === 'completed', 120_000, 250);

    const perRecipient = new Map<string, number>();
    for (const request of platform.callsTo(/\/messages$/)) {
      const to = (request.body as { to: string }).to;
      perRecipient.set(to, (perRecipient.get(to) ?? 0) + 1);
    }
    // Never twice.
    expect([...perRecipient.entries()].filter(([, count]) => count > 1)).toEqual([]);
    const failed = await http<{ data: Array<{ to: string; reason: string }> }>(
      api.url,
      'GET',
      `/campaigns/${created.body.id}/recipients?state=failed&limit=100`,
      { token: key },
    );
    const uncertain = failed.body.data
      .filter((r) => r.reason === 'send_uncertain')
      .map((r) => r.to);
    // The worker died holding some sends: those are the uncertain ones, never sent again. The
    // calls the platform held are among them; one marked a moment before its call left may
    // have had none.
    expect(uncertain.length).toBeGreaterThanOrEqual(1);
    expect(failed.body.data).toHaveLength(uncertain.length);
    expect(uncertain).toEqual(expect.arrayContaining(held));
    const unsent = Array.from(
      { length: RECIPIENTS },
      (_, n) => `55119${String(n).padStart(8, '0')}`,
    ).filter((to) => !perRecipient.has(to));
    expect(uncertain).toEqual(expect.arrayContaining(unsent));
    const done = await campaign();
    expect(done.progress).toMatchObject({
      queued: 0,
      sent: RECIPIENTS - uncertain.length,
      failed: uncertain.length,
    });
  }, 300_000);
});
