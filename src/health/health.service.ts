import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import type { Redis } from 'ioredis';
import { PlatformClient } from '../platform/platform-client.js';
import { REDIS_CLIENT } from '../redis/redis.constants.js';
import type { DependenciesDto, DependencyState } from './dto/health.dto.js';

/** Each check gives up after this long, so a hanging dependency cannot stall a probe. */
export const CHECK_TIMEOUT_MS = 2000;

/**
 * How long one round of checks answers every probe: /health is public, and
 * must not turn each anonymous request into a database, Redis and platform call.
 */
export const CHECK_CACHE_MS = 5000;

@Injectable()
export class HealthService {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly typeOrm: TypeOrmHealthIndicator,
    @Inject(REDIS_CLIENT) private readonly redis: Redis,
    private readonly platform: PlatformClient,
  ) {}

  private last?: { at: number; result: Promise<DependenciesDto> };

  /** The dependencies' states, from a round of checks at most CHECK_CACHE_MS old (one at a time). */
  dependencies(): Promise<DependenciesDto> {
    const now = Date.now();
    if (!this.last || now - this.last.at >= CHECK_CACHE_MS) {
      this.last = { at: now, result: this.check() };
    }
    return this.last.result;
  }

  /** Runs the three checks side by side; each is bounded by CHECK_TIMEOUT_MS. */
  private async check(): Promise<DependenciesDto> {
    const [database, cache, platform] = await Promise.all([
      this.typeOrm.pingCheck('database').withTimeout(CHECK_TIMEOUT_MS),
      this.indicators
        .check('cache')
        .attempt(async () => {
          await this.redis.ping();
        })
        .withTimeout(CHECK_TIMEOUT_MS),
      this.indicators
        .check('platform_api')
        .attempt(({ signal }) => this.platform.ping(signal))
        .withTimeout(CHECK_TIMEOUT_MS),
    ]);
    const state = (up: boolean): DependencyState => (up ? 'healthy' : 'unhealthy');
    return {
      database: state(database.database.status === 'up'),
      cache: state(cache.cache.status === 'up'),
      platform_api: state(platform.platform_api.status === 'up'),
    };
  }
}
