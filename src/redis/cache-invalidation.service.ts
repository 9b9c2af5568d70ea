import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import type { Redis } from 'ioredis';
import { AppConfig } from '../config/app-config.js';
import { REDIS_CLIENT } from './redis.constants.js';

/** A key of `*` means "drop everything" (sent after a missed stretch of messages). */
export const ALL_KEYS = '*';

type Handler = (key: string) => void;

/**
 * Tells every process to drop a cached entry (an instance changed, an API key
 * was revoked) over Redis pub/sub. A process that loses its subscription
 * drops all its cached entries when it comes back, since it may have missed some.
 */
@Injectable()
export class CacheInvalidationService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(CacheInvalidationService.name);
  private readonly handlers = new Map<string, Handler[]>();
  private readonly channel: string;
  private subscriber: Redis | null = null;

  constructor(
    @Inject(REDIS_CLIENT) private readonly redis: Redis,
    config: AppConfig,
  ) {
    this.channel = `${config.REDIS_PREFIX}:cache-invalidate`;
  }

  onModuleInit(): void {
    const subscriber = this.redis.duplicate({ enableOfflineQueue: true, lazyConnect: false });
    subscriber.on('error', () => undefined);
    subscriber.on('ready', () => {
      void subscriber.subscribe(this.channel).catch(() => undefined);
      this.dropAll();
    });
    subscriber.on('message', (_channel: string, payload: string) => {
      const split = payload.indexOf('|');
      if (split > 0) this.deliver(payload.slice(0, split), payload.slice(split + 1));
    });
    this.subscriber = subscriber;
  }

  onApplicationShutdown(): void {
    this.subscriber?.disconnect();
  }

  on(topic: string, handler: Handler): void {
    this.handlers.set(topic, [...(this.handlers.get(topic) ?? []), handler]);
  }

  /** Drops the entry here at once, and in every other process as soon as Redis relays it. */
  async invalidate(topic: string, key: string): Promise<void> {
    this.deliver(topic, key);
    try {
      await this.redis.publish(this.channel, `${topic}|${key}`);
    } catch {
      this.logger.warn(`could not tell other processes to drop ${topic} ${key}`);
    }
  }

  private dropAll(): void {
    for (const topic of this.handlers.keys()) this.deliver(topic, ALL_KEYS);
  }

  private deliver(topic: string, key: string): void {
    for (const handler of this.handlers.get(topic) ?? []) handler(key);
  }
}
