import {
  simulateMessage,
  simulateThroughputUpgrade,
  type WebhookTarget,
} from './support/fake-platform.js';
import {
  APP_SECRET,
  adminToken,
  createCatalogueInstance,
  http,
  useTestService,
  waitFor,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352290001';
const ACCOUNT = '102290129390001';
const CUSTOMER = '5511977770042';

/** A number paced slowly (20 a second), so that a campaign keeps it busy. */
describe('a campaign and the number it shares with conversations', () => {
  const context = useTestService({ env: { PLATFORM_SEND_RATE: '20', CAMPAIGN_LEASE_S: '5' } });
  let admin: string;
  let key: string;
  let instanceId: string;
  const target = (): WebhookTarget => ({
    url: `${context.service.url}/webhooks/messenger`,
    appSecret: APP_SECRET,
    phoneNumberId: PHONE_NUMBER_ID,
    channelAccountId: ACCOUNT,
  });
  const api = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
    http<T>(context.service.url, method, path, { token: key, body });
  const campaignState = async (id: string) =>
    (await api<{ state: string; progress: { sent: number } }>('GET', `/campaigns/${id}`)).body;

  beforeAll(async () => {
    admin = await adminToken(context.service.url);
    ({ instanceId, key } = await createCatalogueInstance(
      context.service.url,
      admin,
      PHONE_NUMBER_ID,
      'Shared',
      ACCOUNT,
    ));
  });

  it("lets a conversation's send go before the campaign's next ones", async () => {
    expect((await simulateMessage(target(), { waId: CUSTOMER }, 'Oi')).status).toBe(200);
    const created = await api<{ id: string }>('POST', '/campaigns', {
      name: 'Busy',
      template_name: 'autumn_sale',
      start: true,
      recipients: Array.from({ length: 400 }, (_, n) => ({
        to: `55119${String(n).padStart(8, '0')}`,
        parameters: { first_name: 'Ana', code: 'Z' },
      })),
    });
    expect(created.status).toBe(201);
    await waitFor(
      async () => (await campaignState(created.body.id)).progress.sent >= 20,
      30_000,
      250,
    );
    const calls = () => context.platform.callsTo(/\/messages$/);
    for (let n = 0; n < 5; n++) {
      const before = calls().length;
      const sent = await api('POST', '/send/text', { to: CUSTOMER, body: `answer ${n}` });
      expect(sent.status).toBe(200);
      const after = calls().slice(before);
      const mine = after.findIndex((request) => (request.body as { to?: string }).to === CUSTOMER);
      // Campaign calls that reached the platform between the request and the answer's own call:
      // at most the one already under way (a shared queue would put the campaign's waiting sends first).
      expect(mine).toBeGreaterThanOrEqual(0);
      expect(mine).toBeLessThanOrEqual(2);
    }
    expect((await campaignState(created.body.id)).state).toBe('running');
    expect((await api('POST', `/campaigns/${created.body.id}/cancel`, {})).status).toBe(200);
  }, 60_000);

  it("paces the number at 1,000 a second once the platform says it upgraded the number's throughput", async () => {
    const before = await http<{ send_rate: number; display_phone_number: string }>(
      context.service.url,
      'GET',
      `/admin/instances/${instanceId}`,
      { token: admin },
    );
    expect(before.body.send_rate).toBe(20);
    expect(await simulateThroughputUpgrade(target(), before.body.display_phone_number)).toBe(200);
    await waitFor(async () => {
      const after = await http<{ send_rate: number }>(
        context.service.url,
        'GET',
        `/admin/instances/${instanceId}`,
        { token: admin },
      );
      return after.body.send_rate === 1000;
    }, 20_000);
  });
});
