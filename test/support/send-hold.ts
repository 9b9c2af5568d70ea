import type { Redis } from 'ioredis';
import { REDIS_CLIENT } from '../../src/redis/redis.constants.js';
import type { TestApp } from './test-app.js';

/**
 * Holds every send of a number in the pacer (the number paused, as after the
 * platform's throttling) until the returned function is called, however long
 * the steps in between take. A send held past the pacer's longest wait is
 * refused (429) or, for a reply part, tried again later.
 */
export async function holdSends(
  service: TestApp,
  phoneNumberId: string,
): Promise<() => Promise<void>> {
  const redis = service.app.get<Redis>(REDIS_CLIENT, { strict: false });
  const pause = `${service.config.REDIS_PREFIX}:send:pause:${phoneNumberId}`;
  await redis.set(pause, '1', 'PX', 3000);
  const refresh = setInterval(() => void redis.set(pause, '1', 'PX', 3000), 500);
  return async () => {
    clearInterval(refresh);
    await redis.del(pause);
  };
}
