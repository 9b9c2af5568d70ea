import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { waitFor } from '../../test/support/test-app.js';
import { WEBHOOK_DEAD_STREAM, WEBHOOK_GROUP, type WebhookDelivery } from '../queue/queues.js';
import { loadConfig } from '../config/load-config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import type { DeliveryBacklog } from './delivery-backlog.js';
import { DeliveryConsumer } from './delivery-consumer.js';
import type { DeliveryHandler } from './delivery-handler.js';
import { BODY_FIELD, RECEIVED_FIELD, webhookStreamKey } from './delivery-stream.js';

const POISON = '{"poison":true}';

/** Stores every delivery except the ones whose body says "poison", which always throw. */
class StubInbound implements DeliveryHandler {
  readonly stored: string[] = [];
  readonly attempts = new Map<string, number>();
  /** How often the poison had been tried when each delivery was stored. */
  readonly poisonTriesAtStore: number[] = [];

  processBatch(deliveries: WebhookDelivery[]): Promise<void> {
    for (const { body } of deliveries) {
      this.attempts.set(body, (this.attempts.get(body) ?? 0) + 1);
    }
    if (deliveries.some(({ body }) => body.includes('poison'))) {
      return Promise.reject(new Error('cannot process this delivery'));
    }
    this.stored.push(...deliveries.map(({ body }) => body));
    const tries = this.attempts.get(POISON) ?? 0;
    this.poisonTriesAtStore.push(...deliveries.map(() => tries));
    return Promise.resolve();
  }
}

describe('DeliveryConsumer with a delivery that always fails (real Redis)', () => {
  const { config } = loadConfig({
    NODE_ENV: 'test',
    REDIS_PREFIX: `consumer${randomBytes(4).toString('hex')}`,
    DELIVERY_LEASE_S: '1',
  });
  const key = webhookStreamKey(config);
  const deadKey = webhookStreamKey(config, WEBHOOK_DEAD_STREAM);
  const redis = new Redis(config.REDIS_URL);
  const inbound = new StubInbound();
  const metrics = new MetricsService();
  const backlog = { caughtUp: () => Promise.resolve(true) };
  const held = { release: () => Promise.resolve() };
  const consumer = new DeliveryConsumer(
    config,
    redis,
    inbound,
    backlog as unknown as DeliveryBacklog,
    held,
    metrics,
  );

  afterAll(async () => {
    await consumer.beforeApplicationShutdown();
    await redis.del(key, deadKey);
    redis.disconnect();
  });

  it('stores the others at once, tries it 10 times, then sets it aside in the dead stream', async () => {
    const bodies = ['{"n":1}', POISON, '{"n":2}', '{"n":3}'];
    for (const body of bodies) {
      await redis.xadd(key, '*', RECEIVED_FIELD, String(Date.now()), BODY_FIELD, body);
    }
    consumer.onApplicationBootstrap();

    await waitFor(() => inbound.stored.length === 3, 10_000);
    expect(inbound.stored).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
    // Stored before the failing one was taken again after its lease (1 s): the batch
    // failed, then one by one in the same pass (n1, the poison alone, n2, n3).
    expect(inbound.poisonTriesAtStore).toEqual([1, 2, 2]);

    await waitFor(async () => (await redis.xlen(deadKey)) === 1, 40_000);
    const [[, fields]] = (await redis.xrange(deadKey, '-', '+')) as Array<[string, string[]]>;
    const dead = Object.fromEntries(
      fields.flatMap((value, i) => (i % 2 === 0 ? [[value, fields[i + 1]]] : [])),
    ) as Record<string, string>;
    expect(dead[BODY_FIELD]).toBe('{"poison":true}');
    expect(dead.error).toBe('cannot process this delivery');
    // Once in its batch, then alone each time it was taken: 10 takes in all.
    expect(inbound.attempts.get('{"poison":true}')).toBe(11);
    expect(await redis.xlen(key)).toBe(0);
    expect(await redis.xpending(key, WEBHOOK_GROUP)).toEqual([0, null, null, null]);
    const counted = await metrics.webhookDeliveries.get();
    expect(counted.values.find((v) => v.labels.outcome === 'dead')?.value).toBe(1);
  }, 60_000);
});
