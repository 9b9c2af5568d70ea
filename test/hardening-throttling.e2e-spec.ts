import { setTimeout as sleep } from 'node:timers/promises';
import { platformError } from './support/fake-platform.js';
import {
  adminToken,
  createApiKey,
  createInstance,
  http,
  useTestService,
} from './support/test-app.js';

const OPEN_WINDOW_FOR = ['5511977000001', '5511977000002', '5511977000003', '5511977000004'];

describe('throttling adapts instead of freezing a number', () => {
  const context = useTestService({
    env: { PLATFORM_SEND_RATE: '10', SERVICE_WINDOW_ENFORCE: 'false' },
  });
  let key: string;
  const messages = /\/messages$/;
  const send = (to: string, body = 'hi') =>
    http<{ code?: string }>(context.service.url, 'POST', '/send/text', {
      token: key,
      body: { to, body },
    });
  const arrivals = (to: string) =>
    context.platform
      .callsTo(messages)
      .filter((request) => (request.body as { to?: string }).to === to);

  beforeAll(async () => {
    const jwt = await adminToken(context.service.url);
    const instanceId = await createInstance(context.service.url, jwt, '106540352200801');
    key = await createApiKey(context.service.url, jwt, instanceId, 'throttle');
    expect(OPEN_WINDOW_FOR).toHaveLength(4);
  });

  beforeEach(() => context.platform.reset());

  it('pauses a throttled number briefly, says for how long, and lets the next send through after it', async () => {
    // 130429 to every attempt of one send, with no Retry-After from the platform.
    context.platform.on('POST', messages, platformError(130429, 'Rate limit hit', 400));
    const throttled = await send(OPEN_WINDOW_FOR[0]);
    expect(throttled.status).toBe(429);
    expect(throttled.body.code).toBe('platform_rate_limited');
    expect(Number(throttled.headers.get('retry-after'))).toBe(2);

    context.platform.reset();
    await sleep(4000);
    const after = await send(OPEN_WINDOW_FOR[0]);
    expect(after.status).toBe(200);
  }, 20_000);

  it('lengthens the pause only when throttling repeats, and slows the number for a while', async () => {
    context.platform.on('POST', messages, platformError(130429, 'Rate limit hit', 400));
    const second = await send(OPEN_WINDOW_FOR[1]);
    expect(Number(second.headers.get('retry-after'))).toBe(4);
    context.platform.reset();
    await sleep(4200);

    // At 10/s a send goes every 100 ms; slowed, they are further apart.
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) => send(OPEN_WINDOW_FOR[1], `m${i}`)),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    const times = arrivals(OPEN_WINDOW_FOR[1]).map((request) => request.at);
    const gaps = times.slice(1).map((at, i) => at - times[i]);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(150);
  }, 20_000);

  it('spaces the sends to a user the platform says gets too many (131056) instead of refusing them', async () => {
    const user = OPEN_WINDOW_FOR[2];
    context.platform.on('POST', messages, (request) =>
      (request.body as { to?: string }).to === user && arrivals(user).length === 1
        ? platformError(131056, 'Pair rate limit hit')
        : undefined,
    );
    const refused = await send(user, 'first');
    expect(refused.status).toBe(429);
    const wait = Number(refused.headers.get('retry-after'));
    expect(wait).toBe(6);

    // Another user of the same number is not held back.
    expect((await send(OPEN_WINDOW_FOR[3])).status).toBe(200);

    await sleep(wait * 1000);
    const started = Date.now();
    expect((await send(user, 'second')).status).toBe(200);
    // The next one waits its turn (about 6 s later) rather than being refused.
    const third = await send(user, 'third');
    expect(third.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(4500);
  }, 30_000);
});
