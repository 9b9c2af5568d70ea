import { Redis } from 'ioredis';

/** The Redis prefixes the services of this test file used. */
const used = new Set<string>();

export function registerRedisPrefix(prefix: string | undefined): void {
  if (prefix) used.add(prefix);
}

/** Deletes every key under the prefixes this test file used, so runs leave Redis as they found it. */
export async function clearRedisPrefixes(url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379') {
  if (used.size === 0) return;
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    for (const prefix of used) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        if (keys.length > 0) await redis.unlink(...keys);
        cursor = next;
      } while (cursor !== '0');
    }
    used.clear();
  } catch {
    // Redis gone (a test stopped it): nothing to clean.
  } finally {
    redis.disconnect();
  }
}
