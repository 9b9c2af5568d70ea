import { Redis } from 'ioredis';
import pg from 'pg';
import type { AppConfig } from '../config/app-config.js';

/** How long each dependency gets to answer one check. */
const ANSWER_TIMEOUT_MS = 3000;

/** A dependency the process cannot work without, as the readiness probe names it. */
export interface Dependency {
  /** Its field in the readiness answer. */
  key: 'database' | 'cache';
  name: 'PostgreSQL' | 'Redis';
  /** host:port, never the URL's credentials. */
  address: string;
  /** Null when it answers, else why not in a few words. */
  check(): Promise<string | null>;
}

/** host:port of a connection URL, never its credentials. */
function addressOf(url: string, defaultPort: number): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || '127.0.0.1'}:${parsed.port || defaultPort}`;
  } catch {
    return 'an unreadable URL';
  }
}

/** The reason in a few words, without the URL (it may hold a password). */
function reason(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[A-Z_]+$/.test(code)) return code;
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\w+:\/\/\S+/g, '<url>').slice(0, 120);
}

async function checkPostgres(config: AppConfig): Promise<string | null> {
  const client = new pg.Client({
    connectionString: config.DATABASE_URL,
    connectionTimeoutMillis: ANSWER_TIMEOUT_MS,
    query_timeout: ANSWER_TIMEOUT_MS,
  });
  // A failed connect may also emit 'error': the reason is taken from the rejection.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return reason(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function checkRedis(config: AppConfig): Promise<string | null> {
  const redis = new Redis(config.REDIS_URL, {
    lazyConnect: true,
    connectTimeout: ANSWER_TIMEOUT_MS,
    commandTimeout: ANSWER_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  // The socket's error says why; connect() itself only says the connection closed.
  let cause: unknown;
  redis.on('error', (error: unknown) => (cause ??= error));
  try {
    await redis.connect();
    await redis.ping();
    return null;
  } catch (error) {
    return reason(cause ?? error);
  } finally {
    redis.disconnect();
  }
}

/**
 * PostgreSQL and Redis, each with a check on a connection of its own (not the
 * app's pools, which do not exist yet at start), so that a missing one is one
 * clear line (which, where, why) rather than the framework's retries and stack traces.
 */
export function dependenciesOf(config: AppConfig): Dependency[] {
  return [
    {
      key: 'database',
      name: 'PostgreSQL',
      address: addressOf(config.DATABASE_URL, 5432),
      check: () => checkPostgres(config),
    },
    {
      key: 'cache',
      name: 'Redis',
      address: addressOf(config.REDIS_URL, 6379),
      check: () => checkRedis(config),
    },
  ];
}
