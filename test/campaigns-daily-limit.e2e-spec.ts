import { simulateBusinessCapability, type WebhookTarget } from './support/fake-platform.js';
import {
  APP_SECRET,
  adminToken,
  createCatalogueInstance,
  http,
  useTestService,
  waitFor,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352270004';
const ACCOUNT = '102290129370004';

const number = (n: number) => `55119${String(n).padStart(8, '0')}`;

interface Campaign {
  id: string;
  state: string;
  waiting_for: string | null;
  progress: { queued: number; sent: number };
}

describe("a business's daily limit on new customers", () => {
  const context = useTestService({
    env: { PLATFORM_SEND_RATE: '1000', CAMPAIGN_DAILY_LIMIT_SHARE: '0.8' },
  });
  let key: string;
  let admin: string;
  let instanceId: string;
  const target = (): WebhookTarget => ({
    url: `${context.service.url}/webhooks/messenger`,
    appSecret: APP_SECRET,
    phoneNumberId: PHONE_NUMBER_ID,
    channelAccountId: ACCOUNT,
  });
  const api = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
    http<T>(context.service.url, method, path, { token: key, body });
  const campaignSends = () =>
    context.platform
      .sentMessages()
      .filter((body) => (body.template as { name?: string } | undefined)?.name === 'autumn_sale');

  beforeAll(async () => {
    admin = await adminToken(context.service.url);
    ({ instanceId, key } = await createCatalogueInstance(
      context.service.url,
      admin,
      PHONE_NUMBER_ID,
      'Limit',
      ACCOUNT,
    ));
  });

  it('keeps campaigns to their share of it, leaves the rest to conversations, and goes on when it rises', async () => {
    expect(await simulateBusinessCapability(target(), 50)).toBe(200);
    await waitFor(async () => {
      const detail = await http<{ daily_limit: number | null }>(
        context.service.url,
        'GET',
        `/admin/instances/${instanceId}`,
        { token: admin },
      );
      return detail.body.daily_limit === 50;
    }, 10_000);

    const created = await api<Campaign>('POST', '/campaigns', {
      name: 'Limited',
      template_name: 'autumn_sale',
      language: 'pt_BR',
      start: true,
      recipients: Array.from({ length: 60 }, (_, n) => ({
        to: number(n),
        parameters: { first_name: `Cliente ${n}`, code: 'OUTONO' },
      })),
    });
    expect(created.status).toBe(201);
    const read = async () => (await api<Campaign>('GET', `/campaigns/${created.body.id}`)).body;
    // 80 % of 50: 40 customers, then it waits, running.
    await waitFor(async () => (await read()).waiting_for === 'daily_limit', 30_000);
    const waiting = await read();
    expect(waiting).toMatchObject({ state: 'running', progress: { sent: 40, queued: 20 } });

    // A conversation's template still goes out meanwhile.
    const live = await api('POST', '/send/template', {
      to: number(500),
      template_name: 'autumn_sale',
      language: 'pt_BR',
      components: [
        {
          type: 'body',
          parameters: [
            { type: 'text', parameter_name: 'first_name', text: 'Ana' },
            { type: 'text', parameter_name: 'code', text: 'OUTONO' },
          ],
        },
      ],
    });
    expect(live.status).toBe(200);
    // Several rounds of the workers later, still 40 campaign sends.
    for (let round = 0; round < 4; round++) {
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect((await read()).progress.sent).toBe(40);
    }
    expect(campaignSends().filter((body) => body.to !== number(500))).toHaveLength(40);

    // -1: unlimited, as the platform writes it.
    expect(await simulateBusinessCapability(target(), -1)).toBe(200);
    await waitFor(async () => (await read()).state === 'completed', 30_000);
    const done = await read();
    expect(done).toMatchObject({ waiting_for: null, progress: { sent: 60, queued: 0 } });
    const counts = new Map<unknown, number>();
    for (const body of campaignSends()) counts.set(body.to, (counts.get(body.to) ?? 0) + 1);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(counts.size).toBe(61);
  });
});
