import {
  adminToken,
  createCatalogueInstance,
  http,
  useTestService,
  waitFor,
} from './support/test-app.js';

const SLOW_NUMBER = '106540352270041';
const SLOW_ACCOUNT = '102290129370041';
const OTHER_NUMBER = '106540352270042';
const OTHER_ACCOUNT = '102290129370042';
/** The campaigns of one number a worker sends at once (campaign-runner.ts). */
const PER_NUMBER = 2;

const number = (campaign: number, n: number) =>
  `55119${String(campaign).padStart(4, '0')}${String(n).padStart(4, '0')}`;

interface Campaign {
  id: string;
  state: string;
  progress: { sent: number; queued: number };
}

describe("campaigns of a slow number leave room for other numbers' campaigns", () => {
  const context = useTestService({
    env: { PLATFORM_SEND_RATE: '1000' },
  });
  const keys = new Map<string, string>();
  const api = <T = Record<string, unknown>>(
    phone: string,
    method: string,
    path: string,
    body?: unknown,
  ) => http<T>(context.service.url, method, path, { token: keys.get(phone), body });

  beforeAll(async () => {
    const admin = await adminToken(context.service.url);
    for (const [phone, account, name] of [
      [SLOW_NUMBER, SLOW_ACCOUNT, 'Slow'],
      [OTHER_NUMBER, OTHER_ACCOUNT, 'Other'],
    ]) {
      const { key } = await createCatalogueInstance(
        context.service.url,
        admin,
        phone,
        name,
        account,
      );
      keys.set(phone, key);
    }
  });

  it('sends another number’s campaign while ten of a number whose every call hangs wait', async () => {
    // The slow number's platform calls are held until the end.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let n = 0;
    context.platform.on('POST', new RegExp(`/${SLOW_NUMBER}/messages$`), (request) => ({
      body: {
        messaging_product: 'messenger',
        contacts: [{ input: (request.body as { to: string }).to }],
        messages: [{ id: `wamid.held-${++n}` }],
      },
      release: held,
    }));
    const create = (phone: string, campaign: number) =>
      api<Campaign>(phone, 'POST', '/campaigns', {
        name: `Fair ${phone} ${campaign}`,
        template_name: 'autumn_sale',
        language: 'pt_BR',
        start: true,
        recipients: [0, 1].map((k) => ({
          to: number(campaign, k),
          parameters: { first_name: 'Ana', code: 'OUTONO' },
        })),
      });
    const slow: string[] = [];
    for (let campaign = 0; campaign < 10; campaign++) {
      const created = await create(SLOW_NUMBER, campaign);
      expect(created.status).toBe(201);
      slow.push(created.body.id);
    }
    const heldCampaigns = () =>
      new Set(
        context.platform
          .callsTo(new RegExp(`/${SLOW_NUMBER}/messages$`))
          .map((call) => (call.body as { to: string }).to.slice(0, 9)),
      );
    await waitFor(() => heldCampaigns().size >= PER_NUMBER, 20_000);

    const other = await create(OTHER_NUMBER, 99);
    expect(other.status).toBe(201);
    const read = async (phone: string, id: string) =>
      (await api<Campaign>(phone, 'GET', `/campaigns/${id}`)).body;
    await waitFor(
      async () => (await read(OTHER_NUMBER, other.body.id)).state === 'completed',
      30_000,
    );
    // Meanwhile the slow number had only its share of the worker.
    expect(heldCampaigns().size).toBe(PER_NUMBER);

    release();
    for (const id of slow) {
      await waitFor(async () => (await read(SLOW_NUMBER, id)).state === 'completed', 60_000);
    }
    expect(context.platform.callsTo(new RegExp(`/${SLOW_NUMBER}/messages$`))).toHaveLength(20);
  }, 180_000);
});
