import { Redis } from 'ioredis';

/** The Redis prefixes the services of this test file used. */
const used = new Set<string>();

/** Whether a service of this test file was pointed at a Redis other than the shared one. */
let otherRedis = false;

/**
 * ioredis gives a connection it closes 2 s to end before destroying it, on a
 * timer of its own; a client of a Redis that never answered (or never
 * existed) holds the process that long after the app closed.
 */
export function noteRedisUrl(url: string | undefined): void {
  if (url !== undefined && url !== (process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')) {
    otherRedis = true;
  }
}

/** Lets ioredis' closing timers of other Redis servers run out, so the test file ends quietly. */
export async function letClosingConnectionsEnd(): Promise<void> {
  if (otherRedis) await new Promise((resolve) => setTimeout(resolve, 2100));
}

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
