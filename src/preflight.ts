import { Redis } from 'ioredis';
import pg from 'pg';
import type { AppConfig } from './config/app-config.js';

/** How long each dependency gets to answer at boot. */
const PREFLIGHT_TIMEOUT_MS = 3000;

const HOW_TO_START =
  'start it (for development: `npm run services`, or see "Quick start" in the README)';

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
    connectionTimeoutMillis: PREFLIGHT_TIMEOUT_MS,
    query_timeout: PREFLIGHT_TIMEOUT_MS,
  });
  // A failed connect may also emit 'error': the reason is taken from the rejection.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return `PostgreSQL is not reachable at ${addressOf(config.DATABASE_URL, 5432)} (${reason(error)}): ${HOW_TO_START}`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function checkRedis(config: AppConfig): Promise<string | null> {
  const redis = new Redis(config.REDIS_URL, {
    lazyConnect: true,
    connectTimeout: PREFLIGHT_TIMEOUT_MS,
    commandTimeout: PREFLIGHT_TIMEOUT_MS,
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
    return `Redis is not reachable at ${addressOf(config.REDIS_URL, 6379)} (${reason(cause ?? error)}): ${HOW_TO_START}`;
  } finally {
    redis.disconnect();
  }
}

/**
 * Checks at boot that PostgreSQL and Redis answer, so that a missing one is
 * one clear line each (which, where, how to start it) rather than the
 * framework's retries and stack traces. Returns the problems, none when both answer.
 */
export async function preflight(config: AppConfig): Promise<string[]> {
  const problems = await Promise.all([checkPostgres(config), checkRedis(config)]);
  return problems.filter((problem): problem is string => problem !== null);
}
