import { platformError } from './support/fake-platform.js';
import {
  adminToken,
  createCatalogueInstance,
  http,
  useTestService,
  waitFor,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352270005';
const ACCOUNT = '102290129370005';

const number = (n: number) => `55119${String(n).padStart(8, '0')}`;

interface Campaign {
  id: string;
  state: string;
  progress: {
    queued: number;
    sent: number;
    failed: number;
    failed_by_code: Record<string, number>;
  };
}

describe('campaign sends the platform will not take now', () => {
  const context = useTestService({
    env: { PLATFORM_SEND_RATE: '1000', CAMPAIGN_RETRY_FOR_S: '2' },
  });
  let key: string;
  const api = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
    http<T>(context.service.url, method, path, { token: key, body });
  const read = async (id: string) => (await api<Campaign>('GET', `/campaigns/${id}`)).body;
  const create = async (name: string, count: number, from: number, ratePerS?: number) => {
    const created = await api<Campaign>('POST', '/campaigns', {
      name,
      template_name: 'autumn_sale',
      language: 'pt_BR',
      start: true,
      ...(ratePerS ? { rate_per_s: ratePerS } : {}),
      recipients: Array.from({ length: count }, (_, n) => ({
        to: number(from + n),
        parameters: { first_name: `Cliente ${n}`, code: 'OUTONO' },
      })),
    });
    expect(created.status).toBe(201);
    return created.body.id;
  };
  /** Accepted sends (and all tries) by recipient. */
  const tally = (from: number, count: number) => {
    const accepted = new Map<string, number>();
    for (const { message } of context.platform.accepted) {
      const to = String(message.to);
      accepted.set(to, (accepted.get(to) ?? 0) + 1);
    }
    const tries = new Map<string, number>();
    for (const body of context.platform.sentMessages()) {
      const to = String(body.to);
      tries.set(to, (tries.get(to) ?? 0) + 1);
    }
    const ours = Array.from({ length: count }, (_, n) => number(from + n));
    return {
      accepted: ours.map((to) => accepted.get(to) ?? 0),
      tries: ours.map((to) => tries.get(to) ?? 0),
    };
  };

  beforeAll(async () => {
    const admin = await adminToken(context.service.url);
    ({ key } = await createCatalogueInstance(
      context.service.url,
      admin,
      PHONE_NUMBER_ID,
      'Retry',
      ACCOUNT,
    ));
  });

  beforeEach(() => context.platform.reset());

  it('sends the rest of the list past a recipient the platform keeps failing, which ends failed after 10 tries over CAMPAIGN_RETRY_FOR_S', async () => {
    const poison = number(1005);
    context.platform.on('POST', /\/messages$/, (request) =>
      (request.body as { to?: string }).to === poison
        ? platformError(131000, 'Something went wrong', 500)
        : undefined,
    );
    const id = await create('Poison', 30, 1000);
    await waitFor(async () => (await read(id)).state === 'completed', 90_000);
    const campaign = await read(id);
    expect(campaign.progress).toMatchObject({
      sent: 29,
      failed: 1,
      queued: 0,
      failed_by_code: { '131000': 1 },
    });
    const failed = await api<{ data: Array<{ to: string; reason: string; error_code: number }> }>(
      'GET',
      `/campaigns/${id}/recipients?state=failed`,
    );
    expect(failed.body.data).toEqual([
      expect.objectContaining({ to: poison, reason: 'retries_exhausted', error_code: 131000 }),
    ]);
    const { accepted, tries } = tally(1000, 30);
    expect(accepted.filter((n) => n !== 1)).toEqual([0]);
    // Ten tries of the campaign's, each tried by the platform client up to three times.
    expect(tries[5]).toBeGreaterThanOrEqual(10);
  }, 120_000);

  it('fails nobody while the platform is down, and sends each once when it is back', async () => {
    let down = true;
    context.platform.on('POST', /\/messages$/, () =>
      down ? platformError(131016, 'Service unavailable', 503) : undefined,
    );
    const id = await create('Outage', 20, 2000);
    // Many tries over several holds, and nobody failed.
    await waitFor(() => context.platform.sentMessages().length >= 40, 60_000);
    const during = (await read(id)).progress as Campaign['progress'] & { sending: number };
    expect(during).toMatchObject({ sent: 0, failed: 0 });
    expect(during.queued + during.sending).toBe(20);
    down = false;
    await waitFor(async () => (await read(id)).state === 'completed', 90_000);
    expect((await read(id)).progress).toMatchObject({ sent: 20, failed: 0 });
    expect(tally(2000, 20).accepted).toEqual(Array.from({ length: 20 }, () => 1));
  }, 120_000);

  it('lets a slow campaign hold up no other: a fast one on the same number ends first', async () => {
    // One send every 10 s: its third cannot go before 20 s have passed.
    const slow = await create('Slow', 3, 3000, 0.1);
    const fast = await create('Fast', 1000, 4000);
    await waitFor(async () => (await read(fast)).state === 'completed', 60_000);
    expect((await read(slow)).state).toBe('running');
    expect(tally(4000, 1000).accepted.every((n) => n === 1)).toBe(true);
    await waitFor(async () => (await read(slow)).state === 'completed', 60_000);
  }, 120_000);
});
