import {
  Global,
  Inject,
  Logger,
  Module,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { AppConfig } from '../config/app-config.js';
import { CacheInvalidationService } from './cache-invalidation.service.js';
import { RateLimiter } from './rate-limiter.js';
import { REDIS_CLIENT } from './redis.constants.js';

/** How long boot waits for Redis before going on without it. */
const BOOT_CONNECT_WAIT_MS = 3000;

/**
 * The service's own Redis connection (counters, rate limits). It fails fast
 * instead of queueing commands while Redis is away: callers answer 503 or
 * report the dependency unhealthy rather than hang.
 */
export function createRedisClient(config: AppConfig): Redis {
  const client = new Redis(config.REDIS_URL, {
    lazyConnect: true,
    enableOfflineQueue: false,
    // Commands of concurrent requests (rate limits, pacing) share round trips.
    enableAutoPipelining: true,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    // A Redis that accepts connections but never answers must not hang callers.
    commandTimeout: 1500,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
  // Reconnection is automatic; without a listener ioredis would log each failure as unhandled.
  client.on('error', () => undefined);
  return client;
}

@Global()
@Module({
  providers: [
    { provide: REDIS_CLIENT, inject: [AppConfig], useFactory: createRedisClient },
    CacheInvalidationService,
    RateLimiter,
  ],
  exports: [REDIS_CLIENT, CacheInvalidationService, RateLimiter],
})
export class RedisModule implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Redis');

  constructor(@Inject(REDIS_CLIENT) private readonly redis: Redis) {}

  async onModuleInit(): Promise<void> {
    // Boot even when Redis is down (health then reports it); reconnection continues in the background.
    try {
      await Promise.race([
        this.redis.connect(),
        // Unreferenced: once connected, the losing timer must not hold the process.
        sleep(BOOT_CONNECT_WAIT_MS, undefined, { ref: false }).then(() =>
          Promise.reject(new Error('timeout')),
        ),
      ]);
    } catch {
      this.logger.warn('Redis is not reachable at boot; retrying in the background');
    }
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.redis.status === 'ready') await this.redis.quit();
    else this.redis.disconnect();
  }
}
