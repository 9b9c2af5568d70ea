import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { loadConfig } from '../config/load-config.js';
import { DeliveryBacklog } from './delivery-backlog.js';
import { BODY_FIELD, webhookStreamKey } from './delivery-stream.js';
import { WEBHOOK_GROUP } from '../queue/queues.js';

describe('DeliveryBacklog (real Redis)', () => {
  const { config } = loadConfig({
    NODE_ENV: 'test',
    REDIS_PREFIX: `backlog${randomBytes(4).toString('hex')}`,
  });
  const key = webhookStreamKey(config);
  const redis = new Redis(config.REDIS_URL);
  const backlog = new DeliveryBacklog(config, redis);
  const position = () => {
    backlog.forget();
    return backlog.position();
  };
  /** Adds a delivery that arrived `agoMs` ago (its stream id is its arrival time). */
  const add = (agoMs: number, seq: number) =>
    redis.xadd(key, `${Date.now() - agoMs}-${seq}`, BODY_FIELD, '{}');
  const take = (count: number) =>
    redis.xreadgroup(
      'GROUP',
      WEBHOOK_GROUP,
      'reader',
      'COUNT',
      count,
      'STREAMS',
      key,
      '>',
    ) as Promise<Array<[string, Array<[string, string[]]>]>>;

  beforeEach(async () => {
    await redis.del(key);
    await redis.xgroup('CREATE', key, WEBHOOK_GROUP, '0', 'MKSTREAM');
  });

  afterAll(async () => {
    await redis.del(key);
    redis.disconnect();
  });

  it('is behind while old deliveries wait unread, as of the last one read', async () => {
    await add(5000, 1);
    await add(4000, 1);
    const [[, [[first]]]] = await take(1);
    await redis.xack(key, WEBHOOK_GROUP, first);
    expect(await position()).toEqual({ readUpTo: Number(first.split('-')[0]), behind: true });
  });

  it('is behind while old deliveries are read but not yet stored, as of the oldest in hand', async () => {
    await add(5000, 1);
    await add(4000, 1);
    await add(3000, 1);
    const [[, entries]] = await take(3);
    // The first is stored; the other two are still in a worker's hands.
    await redis.xack(key, WEBHOOK_GROUP, entries[0][0]);
    expect(await position()).toEqual({
      readUpTo: Number(entries[1][0].split('-')[0]),
      behind: true,
    });
    await redis.xack(key, WEBHOOK_GROUP, entries[1][0], entries[2][0]);
    expect(await position()).toEqual({ readUpTo: null, behind: false });
  });

  it('sees a batch being stored behind many deliveries a dead worker left', async () => {
    for (let i = 0; i < 900; i++) await add(60_000, i);
    const [[, orphans]] = await take(900);
    await redis.xclaim(
      key,
      WEBHOOK_GROUP,
      'reader',
      0,
      ...orphans.map(([id]) => id),
      'IDLE',
      20_000,
      'JUSTID',
    );
    await add(3000, 1);
    const [[, [[live]]]] = await take(1);
    expect(await position()).toEqual({ readUpTo: Number(live.split('-')[0]), behind: true });
  });

  it('keeps up when what is in hand is fresh (the live race), or was taken by a worker long gone', async () => {
    // Just arrived (dated 5 s ahead, so a slow run cannot age it past a second).
    await add(-5000, 1);
    await take(1);
    expect(await position()).toEqual({ readUpTo: null, behind: false });

    await redis.del(key);
    await redis.xgroup('CREATE', key, WEBHOOK_GROUP, '0', 'MKSTREAM');
    await add(60_000, 1);
    const [[, [[orphan]]]] = await take(1);
    // Taken 20 s ago and never stored: the takeover's, not a batch being stored.
    await redis.xclaim(key, WEBHOOK_GROUP, 'reader', 0, orphan, 'IDLE', 20_000);
    expect(await position()).toEqual({ readUpTo: null, behind: false });
  });
});
