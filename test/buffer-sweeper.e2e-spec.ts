import { setTimeout as sleep } from 'node:timers/promises';
import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { BUFFER_QUEUE } from '../src/queue/queues.js';
import { FakeAgent } from './support/fake-agent.js';
import { simulateMessage, type WebhookTarget } from './support/fake-platform.js';
import {
  APP_SECRET,
  adminToken,
  createInstance,
  http,
  readUntil,
  useTestService,
  type TestApp,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352288201';

/**
 * The instance's own quiet delay, far longer than MESSAGE_BUFFER_DELAY, the
 * sweeper's grace and any step of the test: it ends when the test shortens it.
 */
const INSTANCE_DELAY_S = 600;

describe("the sweeper keeps an instance's own buffer delay", () => {
  const context = useTestService({
    agent: true,
    env: {
      MESSAGE_BUFFER_DELAY: '0.2',
      MESSAGE_BUFFER_MAX_WAIT: '1200',
      SWEEP_INTERVAL_S: '1',
      AGENT_TYPING_INDICATOR: 'false',
    },
  });
  let service: TestApp;
  let agent: FakeAgent;
  let target: WebhookTarget;
  let token: string;
  let instanceId: string;
  const setDelay = async (seconds: number) => {
    const patched = await http(service.url, 'PATCH', `/admin/instances/${instanceId}`, {
      token,
      body: { agent: { buffer_delay_s: seconds } },
    });
    expect(patched.status).toBe(200);
  };

  beforeAll(async () => {
    ({ service, agent } = context);
    token = await adminToken(service.url);
    instanceId = await createInstance(service.url, token, PHONE_NUMBER_ID, 'Slow buffer');
    await setDelay(INSTANCE_DELAY_S);
    target = {
      url: `${service.url}/webhooks/messenger`,
      appSecret: APP_SECRET,
      phoneNumberId: PHONE_NUMBER_ID,
    };
  });

  it('a burst is not flushed by the sweeper before the delay, and is flushed after it', async () => {
    const waId = '5511900082001';
    const first = await simulateMessage(target, { waId }, 'primeira parte');
    expect(first.status).toBe(200);
    // Past MESSAGE_BUFFER_DELAY plus the sweeper's grace (5 s), several sweeps later, but
    // within the instance's own delay: the burst still waits for its second message.
    await sleep(7500);
    const second = await simulateMessage(target, { waId }, 'segunda parte');
    expect(second.status).toBe(200);
    expect(agent.callsFor(waId)).toEqual([]);
    // The instance's delay is over (shortened, rather than waited for): the sweeper flushes
    // the burst by it, whole.
    await setDelay(0.5);

    const calls = await readUntil(
      () => agent.callsFor(waId),
      (list) => list.length >= 1,
      30_000,
    );
    expect(calls).toHaveLength(1);
    expect(calls[0].body.messages.map((m) => m.id)).toEqual([first.wamid, second.wamid]);
  }, 60_000);
});

describe("the sweeper rescues a stranded buffer by its instance's own delay", () => {
  const context = useTestService({
    agent: true,
    env: {
      // Longer than any step of the test: the other instance's buffer is never due within it.
      MESSAGE_BUFFER_DELAY: '600',
      MESSAGE_BUFFER_MAX_WAIT: '1200',
      SWEEP_INTERVAL_S: '1',
      AGENT_TYPING_INDICATOR: 'false',
    },
  });
  let agent: FakeAgent;
  const numbers = { fast: '106540352288202', global: '106540352288203' };
  const targetOf = (phoneNumberId: string): WebhookTarget => ({
    url: `${context.service.url}/webhooks/messenger`,
    appSecret: APP_SECRET,
    phoneNumberId,
  });

  beforeAll(async () => {
    agent = context.agent;
    const { url } = context.service;
    const token = await adminToken(url);
    const fast = await createInstance(url, token, numbers.fast, 'Quick buffer');
    await createInstance(url, token, numbers.global, 'Global buffer');
    const patched = await http(url, 'PATCH', `/admin/instances/${fast}`, {
      token,
      body: { agent: { buffer_delay_s: 0.2 } },
    });
    expect(patched.status).toBe(200);
  });

  it('a buffer whose flush job was lost goes to the agent after its own delay, not the global one', async () => {
    const fast = '5511900082011';
    const global = '5511900082012';
    const stranded = await simulateMessage(targetOf(numbers.fast), { waId: fast }, 'oi');
    expect(stranded.status).toBe(200);
    await readUntil(
      () => context.db.query('SELECT 1 FROM messages WHERE wamid = $1', [stranded.wamid]),
      (found) => found.length === 1,
    );
    // Redis loses the contact's flush job (a restart without persistence, say).
    const buffers = context.service.app.get<Queue>(getQueueToken(BUFFER_QUEUE));
    await buffers.drain(true);
    // Another instance's contact writes just after, with the global 600 s delay.
    const later = await simulateMessage(targetOf(numbers.global), { waId: global }, 'olá');
    expect(later.status).toBe(200);

    // The stranded buffer is due 0.2 s after its message: the sweeper (its grace, 5 s) rescues
    // it long before the other buffer is due (by the global delay, it would wait as long).
    const calls = await readUntil(
      () => agent.calls.map((call) => call.body.contact.wa_id),
      (list) => list.length >= 1,
      40_000,
    );
    expect(calls).toEqual([fast]);
  }, 60_000);
});
