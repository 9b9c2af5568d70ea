import { isIP } from 'node:net';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMinSize,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  MinLength,
  Validate,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';

export const APP_ROLES = ['all', 'api', 'worker'] as const;
export type AppRole = (typeof APP_ROLES)[number];

export const NODE_ENVS = ['development', 'production', 'test'] as const;
export type NodeEnv = (typeof NODE_ENVS)[number];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Decodes a 256-bit key given as 64 hex characters or as base64; null when it is neither. */
export function decodeEncryptionKey(value: string): Buffer | null {
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (/^[A-Za-z0-9+/_-]{42,44}={0,2}$/.test(value)) {
    const key = Buffer.from(value, 'base64');
    if (key.length === 32) return key;
  }
  return null;
}

@ValidatorConstraint({ name: 'encryptionKey' })
class EncryptionKeyConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    const keys = Array.isArray(value) ? value : [value];
    return keys.every((key) => typeof key === 'string' && decodeEncryptionKey(key) !== null);
  }
  defaultMessage(args: ValidationArguments): string {
    return `${args.property} must be 32 bytes as 64 hex characters or base64`;
  }
}

@ValidatorConstraint({ name: 'url' })
class UrlConstraint implements ValidatorConstraintInterface {
  validate(value: unknown, args: ValidationArguments): boolean {
    if (typeof value !== 'string') return false;
    const protocols = args.constraints as string[];
    try {
      return protocols.includes(new URL(value).protocol.replace(/:$/, ''));
    } catch {
      return false;
    }
  }
  defaultMessage(args: ValidationArguments): string {
    const protocols = args.constraints as string[];
    return `${args.property} must be a URL starting with ${protocols.map((p) => `${p}://`).join(' or ')}`;
  }
}

const toBoolean = ({ value }: { value: unknown }): unknown => {
  if (typeof value !== 'string') return value;
  const normalised = value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(normalised)) return true;
  if (['false', '0', 'no', 'off'].includes(normalised)) return false;
  return value;
};

/** Addresses or CIDR ranges: `10.0.0.0/8`, `192.168.1.7`, `fd00::/8`. */
function isAddressOrRange(entry: string): boolean {
  const [address, bits, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  const prefix = Number(bits);
  return /^\d{1,3}$/.test(bits) && prefix <= (version === 4 ? 32 : 128);
}

@ValidatorConstraint({ name: 'trustedProxies' })
class TrustedProxiesConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return Array.isArray(value) && value.every((entry) => isAddressOrRange(String(entry)));
  }
  defaultMessage(): string {
    return 'TRUST_PROXY must list the proxies as addresses or CIDR ranges, comma-separated (e.g. 10.0.0.0/8), or be empty';
  }
}

@ValidatorConstraint({ name: 'addressList' })
class AddressListConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return Array.isArray(value) && value.every((entry) => isAddressOrRange(String(entry)));
  }
  defaultMessage(args: ValidationArguments): string {
    return `${String(args.constraints[0])} must list addresses or CIDR ranges, comma-separated (e.g. 10.0.0.0/8), or be empty`;
  }
}

const EVENT_RETRY_SCHEDULE_MESSAGE =
  'EVENT_RETRY_SCHEDULE_S must list one or more waits in seconds (0.01 to 86400), comma-separated';

const toNumberList = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item.length > 0)
        .map((item) => (/^\d+(\.\d+)?$/.test(item) ? Number(item) : item))
    : value;

const toProxyList = ({ value }: { value: unknown }): unknown => {
  if (typeof value !== 'string') return value;
  if (['false', 'no', 'off', 'none', ''].includes(value.trim().toLowerCase())) return [];
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
};

const toList = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item.length > 0)
    : value;

/**
 * Every setting of the service, validated once at boot (see loadConfig) and
 * injected typed. Property names are the environment variables' names.
 */
export class AppConfig {
  @IsIn(NODE_ENVS, { message: `NODE_ENV must be one of ${NODE_ENVS.join(', ')}` })
  NODE_ENV: NodeEnv = 'development';

  @IsIn(APP_ROLES, { message: `APP_ROLE must be one of ${APP_ROLES.join(', ')}` })
  APP_ROLE: AppRole = 'all';

  @Type(() => Number)
  @IsInt({ message: 'PORT must be an integer from 0 to 65535' })
  @Min(0, { message: 'PORT must be an integer from 0 to 65535' })
  @Max(65535, { message: 'PORT must be an integer from 0 to 65535' })
  PORT = 3000;

  @IsString()
  @MinLength(1, { message: 'HOST must not be empty' })
  HOST = '0.0.0.0';

  /**
   * The proxies (addresses or CIDR ranges) whose X-Forwarded-For is believed,
   * e.g. the ingress; empty: none. Never "everyone": any client could then
   * claim any address and escape the login limit.
   */
  @Transform(toProxyList)
  @Validate(TrustedProxiesConstraint)
  TRUST_PROXY: string[] = [];

  @Validate(UrlConstraint, ['postgres', 'postgresql'])
  DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

  @Transform(toBoolean)
  @IsBoolean({ message: 'DB_MIGRATIONS_RUN must be true or false' })
  DB_MIGRATIONS_RUN = true;

  /**
   * How long `node dist/migrate.js` waits for PostgreSQL to answer (at start,
   * or again after it went away mid-migration) before it exits 1.
   */
  @Type(() => Number)
  @IsNumber({}, { message: 'MIGRATE_WAIT_S must be a number of seconds from 0 to 86400' })
  @Min(0, { message: 'MIGRATE_WAIT_S must be a number of seconds from 0 to 86400' })
  @Max(86400, { message: 'MIGRATE_WAIT_S must be a number of seconds from 0 to 86400' })
  MIGRATE_WAIT_S = 600;

  @Validate(UrlConstraint, ['redis', 'rediss'])
  REDIS_URL = 'redis://127.0.0.1:6379';

  /** Namespace of every Redis key (queues, counters), so several deployments can share one Redis. */
  @Matches(/^[A-Za-z0-9_.-]{1,32}$/, {
    message: 'REDIS_PREFIX must be 1 to 32 letters, digits, dots, dashes or underscores',
  })
  REDIS_PREFIX = 'mc';

  @Validate(UrlConstraint, ['http', 'https'])
  PLATFORM_API_URL = 'https://graph.facebook.com';

  @Matches(/^v\d+\.\d+$/, { message: 'PLATFORM_API_VERSION must look like v25.0' })
  PLATFORM_API_VERSION = 'v25.0';

  @IsString()
  @MinLength(8, { message: 'PLATFORM_VERIFY_TOKEN must be at least 8 characters' })
  PLATFORM_VERIFY_TOKEN: string;

  /** Several secrets separated by commas are all accepted, so the secret can be rotated. */
  @Transform(toList)
  @IsString({ each: true, message: 'PLATFORM_APP_SECRET must be one or more secrets' })
  @MinLength(8, {
    each: true,
    message: 'PLATFORM_APP_SECRET must be one or more comma-separated secrets of 8+ characters',
  })
  PLATFORM_APP_SECRET: string[];

  @Type(() => Number)
  @IsInt({ message: 'PLATFORM_TIMEOUT_MS must be an integer from 100 to 120000' })
  @Min(100, { message: 'PLATFORM_TIMEOUT_MS must be an integer from 100 to 120000' })
  @Max(120000, { message: 'PLATFORM_TIMEOUT_MS must be an integer from 100 to 120000' })
  PLATFORM_TIMEOUT_MS = 10000;

  /** The wait before a platform call's second attempt, doubling up to 16 times it. */
  @Type(() => Number)
  @IsInt({ message: 'PLATFORM_RETRY_DELAY_MS must be an integer from 1 to 10000' })
  @Min(1, { message: 'PLATFORM_RETRY_DELAY_MS must be an integer from 1 to 10000' })
  @Max(10000, { message: 'PLATFORM_RETRY_DELAY_MS must be an integer from 1 to 10000' })
  PLATFORM_RETRY_DELAY_MS = 250;

  @IsOptional()
  @Validate(UrlConstraint, ['http', 'https'])
  AGENT_MODULE_URL?: string;

  @IsOptional()
  @IsString()
  AGENT_MODULE_TOKEN?: string;

  /** The whole agent call, connection to last byte (a slowly dripping answer is cut off too). */
  @Type(() => Number)
  @IsInt({ message: 'AGENT_TIMEOUT_MS must be an integer from 100 to 600000' })
  @Min(100, { message: 'AGENT_TIMEOUT_MS must be an integer from 100 to 600000' })
  @Max(600000, { message: 'AGENT_TIMEOUT_MS must be an integer from 100 to 600000' })
  AGENT_TIMEOUT_MS = 30000;

  /** The most of an agent's answer that is read; a bigger one is cut off and fails the turn. */
  @Type(() => Number)
  @IsInt({ message: 'AGENT_MAX_RESPONSE_BYTES must be an integer from 1024 to 67108864' })
  @Min(1024, { message: 'AGENT_MAX_RESPONSE_BYTES must be an integer from 1024 to 67108864' })
  @Max(67108864, { message: 'AGENT_MAX_RESPONSE_BYTES must be an integer from 1024 to 67108864' })
  AGENT_MAX_RESPONSE_BYTES = 1048576;

  /**
   * Agent calls one instance may have in flight at once, across every worker
   * process (0: no limit); its other turns wait without holding a worker, so
   * one slow agent cannot take the workers from the other instances. 24 of a
   * worker's 32: one worker still leaves 8 to the others, and a number alone
   * keeps most of its speed (8 cut the bench's one-number drain).
   */
  @Type(() => Number)
  @IsInt({ message: 'AGENT_MAX_CONCURRENCY_PER_INSTANCE must be an integer from 0 to 10000' })
  @Min(0, { message: 'AGENT_MAX_CONCURRENCY_PER_INSTANCE must be an integer from 0 to 10000' })
  @Max(10000, { message: 'AGENT_MAX_CONCURRENCY_PER_INSTANCE must be an integer from 0 to 10000' })
  AGENT_MAX_CONCURRENCY_PER_INSTANCE = 24;

  @Type(() => Number)
  @IsNumber({}, { message: 'MESSAGE_BUFFER_DELAY must be a number of seconds from 0 to 3600' })
  @Min(0, { message: 'MESSAGE_BUFFER_DELAY must be a number of seconds from 0 to 3600' })
  @Max(3600, { message: 'MESSAGE_BUFFER_DELAY must be a number of seconds from 0 to 3600' })
  MESSAGE_BUFFER_DELAY = 8;

  @Type(() => Number)
  @IsNumber({}, { message: 'MESSAGE_BUFFER_MAX_WAIT must be a number of seconds from 0 to 86400' })
  @Min(0, { message: 'MESSAGE_BUFFER_MAX_WAIT must be a number of seconds from 0 to 86400' })
  @Max(86400, { message: 'MESSAGE_BUFFER_MAX_WAIT must be a number of seconds from 0 to 86400' })
  MESSAGE_BUFFER_MAX_WAIT = 60;

  /** How long a turn keeps retrying the agent (timeouts, 5xx, 408, 429) before it fails. */
  @Type(() => Number)
  @IsNumber({}, { message: 'AGENT_RETRY_MAX_S must be a number of seconds from 0 to 86400' })
  @Min(0, { message: 'AGENT_RETRY_MAX_S must be a number of seconds from 0 to 86400' })
  @Max(86400, { message: 'AGENT_RETRY_MAX_S must be a number of seconds from 0 to 86400' })
  AGENT_RETRY_MAX_S = 900;

  /** How long a reply part keeps retrying the platform (outage, throttling) before it fails. */
  @Type(() => Number)
  @IsNumber({}, { message: 'REPLY_RETRY_MAX_S must be a number of seconds from 0 to 86400' })
  @Min(0, { message: 'REPLY_RETRY_MAX_S must be a number of seconds from 0 to 86400' })
  @Max(86400, { message: 'REPLY_RETRY_MAX_S must be a number of seconds from 0 to 86400' })
  REPLY_RETRY_MAX_S = 600;

  /** A worker's hold on a turn; renewed while it works, taken over by another worker once expired. */
  @Type(() => Number)
  @IsNumber({}, { message: 'TURN_LEASE_S must be a number of seconds from 1 to 600' })
  @Min(1, { message: 'TURN_LEASE_S must be a number of seconds from 1 to 600' })
  @Max(600, { message: 'TURN_LEASE_S must be a number of seconds from 1 to 600' })
  TURN_LEASE_S = 15;

  /** A webhook delivery a worker took and has not stored this long is taken over by another. */
  @Type(() => Number)
  @IsNumber({}, { message: 'DELIVERY_LEASE_S must be a number of seconds from 1 to 3600' })
  @Min(1, { message: 'DELIVERY_LEASE_S must be a number of seconds from 1 to 3600' })
  @Max(3600, { message: 'DELIVERY_LEASE_S must be a number of seconds from 1 to 3600' })
  DELIVERY_LEASE_S = 30;

  /** How often one worker looks for stranded messages and turns whose worker died. */
  @Type(() => Number)
  @IsNumber({}, { message: 'SWEEP_INTERVAL_S must be a number of seconds from 0.5 to 3600' })
  @Min(0.5, { message: 'SWEEP_INTERVAL_S must be a number of seconds from 0.5 to 3600' })
  @Max(3600, { message: 'SWEEP_INTERVAL_S must be a number of seconds from 0.5 to 3600' })
  SWEEP_INTERVAL_S = 15;

  @IsString()
  @MinLength(1, { message: 'ADMIN_USERNAME must not be empty' })
  ADMIN_USERNAME = 'admin';

  @IsString()
  @MinLength(8, { message: 'ADMIN_PASSWORD must be at least 8 characters' })
  ADMIN_PASSWORD: string;

  @IsString()
  @MinLength(32, { message: 'JWT_SECRET must be at least 32 characters' })
  JWT_SECRET: string;

  @Type(() => Number)
  @IsInt({ message: 'JWT_EXPIRES_IN must be an integer number of seconds from 60 to 2592000' })
  @Min(60, { message: 'JWT_EXPIRES_IN must be an integer number of seconds from 60 to 2592000' })
  @Max(2592000, {
    message: 'JWT_EXPIRES_IN must be an integer number of seconds from 60 to 2592000',
  })
  JWT_EXPIRES_IN = 3600;

  @Validate(EncryptionKeyConstraint)
  ENCRYPTION_KEY: string;

  /** Keys that only decrypt, for values written before a key rotation. */
  @Transform(toList)
  @Validate(EncryptionKeyConstraint)
  ENCRYPTION_PREVIOUS_KEYS: string[] = [];

  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'API_KEY must be at least 16 characters when set' })
  API_KEY?: string;

  @Transform(toBoolean)
  @IsBoolean({ message: 'SERVICE_WINDOW_ENFORCE must be true or false' })
  SERVICE_WINDOW_ENFORCE = true;

  @Type(() => Number)
  @IsInt({ message: 'READINESS_NOT_READY_STATUS must be an HTTP status from 200 to 599' })
  @Min(200, { message: 'READINESS_NOT_READY_STATUS must be an HTTP status from 200 to 599' })
  @Max(599, { message: 'READINESS_NOT_READY_STATUS must be an HTTP status from 200 to 599' })
  READINESS_NOT_READY_STATUS = 503;

  @Transform(toBoolean)
  @IsBoolean({ message: 'AGENT_TYPING_INDICATOR must be true or false' })
  AGENT_TYPING_INDICATOR = true;

  /**
   * The address the agent reaches this service at (e.g. https://connector.example.com):
   * the agent's payload then carries short-lived signed URLs to its media. Empty: none.
   */
  @IsOptional()
  @Validate(UrlConstraint, ['http', 'https'])
  PUBLIC_URL?: string;

  /** How long a signed media URL in the agent's payload stays valid. */
  @Type(() => Number)
  @IsInt({ message: 'AGENT_MEDIA_URL_TTL_S must be a whole number of seconds from 10 to 86400' })
  @Min(10, { message: 'AGENT_MEDIA_URL_TTL_S must be a whole number of seconds from 10 to 86400' })
  @Max(86400, {
    message: 'AGENT_MEDIA_URL_TTL_S must be a whole number of seconds from 10 to 86400',
  })
  AGENT_MEDIA_URL_TTL_S = 900;

  /** How many messages of the conversation before a burst the agent's payload carries (`context`). */
  @Type(() => Number)
  @IsInt({ message: 'AGENT_CONTEXT_MESSAGES must be a whole number from 0 to 200' })
  @Min(0, { message: 'AGENT_CONTEXT_MESSAGES must be a whole number from 0 to 200' })
  @Max(200, { message: 'AGENT_CONTEXT_MESSAGES must be a whole number from 0 to 200' })
  AGENT_CONTEXT_MESSAGES = 20;

  @Type(() => Number)
  @IsNumber({}, { message: 'PLATFORM_SEND_RATE must be a number of messages per second above 0' })
  @Min(0.001, { message: 'PLATFORM_SEND_RATE must be a number of messages per second above 0' })
  PLATFORM_SEND_RATE = 80;

  /**
   * Requests per second each API key may make, shared by all processes.
   * Unset: twice PLATFORM_SEND_RATE (see apiKeyRateLimit).
   */
  @IsOptional()
  @Type(() => Number)
  @IsNumber({}, { message: 'API_KEY_RATE_LIMIT must be a number of requests per second above 0' })
  @Min(0.001, { message: 'API_KEY_RATE_LIMIT must be a number of requests per second above 0' })
  API_KEY_RATE_LIMIT?: number;

  /** Requests an API key may make at once, above its steady rate. Unset: see apiKeyRateBurst. */
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'API_KEY_RATE_BURST must be a whole number of requests, at least 1' })
  @Min(1, { message: 'API_KEY_RATE_BURST must be a whole number of requests, at least 1' })
  API_KEY_RATE_BURST?: number;

  /** When set, GET /metrics requires `Authorization: Bearer <METRICS_TOKEN>`. */
  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'METRICS_TOKEN must be at least 16 characters when set' })
  METRICS_TOKEN?: string;

  /**
   * The waits before each new attempt of an event delivery, in seconds: about
   * three days in all, then the delivery fails (each wait varies by ±20 %).
   */
  @Transform(toNumberList)
  @IsNumber({}, { each: true, message: EVENT_RETRY_SCHEDULE_MESSAGE })
  @Min(0.01, { each: true, message: EVENT_RETRY_SCHEDULE_MESSAGE })
  @Max(86400, { each: true, message: EVENT_RETRY_SCHEDULE_MESSAGE })
  @ArrayMinSize(1, { message: EVENT_RETRY_SCHEDULE_MESSAGE })
  EVENT_RETRY_SCHEDULE_S: number[] = [
    5, 300, 1800, 7200, 18000, 36000, 36000, 36000, 36000, 36000, 36000,
  ];

  /** How long a subscriber has to answer one event. */
  @Type(() => Number)
  @IsInt({ message: 'EVENT_TIMEOUT_MS must be an integer from 100 to 60000' })
  @Min(100, { message: 'EVENT_TIMEOUT_MS must be an integer from 100 to 60000' })
  @Max(60000, { message: 'EVENT_TIMEOUT_MS must be an integer from 100 to 60000' })
  EVENT_TIMEOUT_MS = 10000;

  /** Events sent at once by one worker process (to different contacts or subscriptions). */
  @Type(() => Number)
  @IsInt({ message: 'EVENT_CONCURRENCY must be an integer from 1 to 1000' })
  @Min(1, { message: 'EVENT_CONCURRENCY must be an integer from 1 to 1000' })
  @Max(1000, { message: 'EVENT_CONCURRENCY must be an integer from 1 to 1000' })
  EVENT_CONCURRENCY = 64;

  /** How often an idle worker looks for events to send, in milliseconds. */
  @Type(() => Number)
  @IsInt({ message: 'EVENT_POLL_MS must be an integer from 10 to 10000' })
  @Min(10, { message: 'EVENT_POLL_MS must be an integer from 10 to 10000' })
  @Max(10000, { message: 'EVENT_POLL_MS must be an integer from 10 to 10000' })
  EVENT_POLL_MS = 200;

  /** How long a worker holds a contact's events while it sends them; after it, another worker may. */
  @Type(() => Number)
  @IsNumber({}, { message: 'EVENT_LEASE_S must be a number of seconds from 1 to 3600' })
  @Min(1, { message: 'EVENT_LEASE_S must be a number of seconds from 1 to 3600' })
  @Max(3600, { message: 'EVENT_LEASE_S must be a number of seconds from 1 to 3600' })
  EVENT_LEASE_S = 60;

  /** A subscription failing without a success for this long is disabled. */
  @Type(() => Number)
  @IsNumber({}, { message: 'EVENT_DISABLE_AFTER_S must be a number of seconds from 1 to 2592000' })
  @Min(1, { message: 'EVENT_DISABLE_AFTER_S must be a number of seconds from 1 to 2592000' })
  @Max(2592000, {
    message: 'EVENT_DISABLE_AFTER_S must be a number of seconds from 1 to 2592000',
  })
  EVENT_DISABLE_AFTER_S = 86400;

  /** After a secret rotation, the previous secret also signs for this long. */
  @Type(() => Number)
  @IsNumber({}, { message: 'EVENT_SECRET_GRACE_S must be a number of seconds from 0 to 2592000' })
  @Min(0, { message: 'EVENT_SECRET_GRACE_S must be a number of seconds from 0 to 2592000' })
  @Max(2592000, { message: 'EVENT_SECRET_GRACE_S must be a number of seconds from 0 to 2592000' })
  EVENT_SECRET_GRACE_S = 86400;

  /** Subscriptions per instance (those for every instance count on their own). */
  @Type(() => Number)
  @IsInt({ message: 'EVENT_SUBSCRIPTIONS_MAX must be an integer from 1 to 1000' })
  @Min(1, { message: 'EVENT_SUBSCRIPTIONS_MAX must be an integer from 1 to 1000' })
  @Max(1000, { message: 'EVENT_SUBSCRIPTIONS_MAX must be an integer from 1 to 1000' })
  EVENT_SUBSCRIPTIONS_MAX = 10;

  /** Events (and their delivery records) are kept this many days, for replays. */
  @Type(() => Number)
  @IsNumber({}, { message: 'EVENT_RETENTION_DAYS must be a number of days from 1 to 365' })
  @Min(1, { message: 'EVENT_RETENTION_DAYS must be a number of days from 1 to 365' })
  @Max(365, { message: 'EVENT_RETENTION_DAYS must be a number of days from 1 to 365' })
  EVENT_RETENTION_DAYS = 7;

  /**
   * How long one replay may run: PostgreSQL cancels it after this and rolls
   * it back (422 event_replay_timeout, nothing queued), so a client that gave
   * up never finds it committed later.
   */
  @Type(() => Number)
  @IsInt({ message: 'EVENT_REPLAY_TIMEOUT_MS must be an integer from 100 to 300000' })
  @Min(100, { message: 'EVENT_REPLAY_TIMEOUT_MS must be an integer from 100 to 300000' })
  @Max(300000, { message: 'EVENT_REPLAY_TIMEOUT_MS must be an integer from 100 to 300000' })
  EVENT_REPLAY_TIMEOUT_MS = 10000;

  /**
   * Addresses or CIDR ranges event targets may resolve to although they are
   * private (an internal deployment's receivers). Loopback, private,
   * link-local and metadata addresses are refused otherwise (loopback is
   * allowed outside production).
   */
  @Transform(toProxyList)
  @Validate(AddressListConstraint, ['EVENT_TARGET_ALLOWLIST'])
  EVENT_TARGET_ALLOWLIST: string[] = [];

  /**
   * A person's send to a contact pauses the agent for it until this long
   * after their last send (0: never).
   */
  @Type(() => Number)
  @IsNumber({}, { message: 'HANDOFF_AUTO_PAUSE_S must be a number of seconds from 0 to 604800' })
  @Min(0, { message: 'HANDOFF_AUTO_PAUSE_S must be a number of seconds from 0 to 604800' })
  @Max(604800, { message: 'HANDOFF_AUTO_PAUSE_S must be a number of seconds from 0 to 604800' })
  HANDOFF_AUTO_PAUSE_S = 1800;

  /**
   * How often an open live stream (GET /live) gets a keep-alive line, and its
   * credentials are checked again (a revoked key or disabled account ends it).
   */
  @Type(() => Number)
  @IsNumber({}, { message: 'LIVE_KEEPALIVE_S must be a number of seconds from 1 to 300' })
  @Min(1, { message: 'LIVE_KEEPALIVE_S must be a number of seconds from 1 to 300' })
  @Max(300, { message: 'LIVE_KEEPALIVE_S must be a number of seconds from 1 to 300' })
  LIVE_KEEPALIVE_S = 15;

  /**
   * The most events a second one live stream is sent (a second's worth at
   * once). A stream over it rests for LIVE_STREAM_REST_S, then gets `reset`
   * and reads the API again: a flood costs each stream one read.
   */
  @Type(() => Number)
  @IsInt({ message: 'LIVE_STREAM_RATE must be a whole number of events from 1 to 100000' })
  @Min(1, { message: 'LIVE_STREAM_RATE must be a whole number of events from 1 to 100000' })
  @Max(100000, { message: 'LIVE_STREAM_RATE must be a whole number of events from 1 to 100000' })
  LIVE_STREAM_RATE = 50;

  /**
   * How long a live stream over LIVE_STREAM_RATE is sent nothing before its
   * `reset` (up to half as long again, at random, so streams come back one by one).
   */
  @Type(() => Number)
  @IsNumber({}, { message: 'LIVE_STREAM_REST_S must be a number of seconds from 0.1 to 300' })
  @Min(0.1, { message: 'LIVE_STREAM_REST_S must be a number of seconds from 0.1 to 300' })
  @Max(300, { message: 'LIVE_STREAM_REST_S must be a number of seconds from 0.1 to 300' })
  LIVE_STREAM_REST_S = 15;

  /**
   * How often the workers read every business account's template catalogue
   * from the platform (webhooks keep it current between); 0: never on a timer.
   */
  @Type(() => Number)
  @IsInt({ message: 'TEMPLATE_SYNC_INTERVAL_S must be a whole number of seconds from 0 to 604800' })
  @Min(0, {
    message: 'TEMPLATE_SYNC_INTERVAL_S must be a whole number of seconds from 0 to 604800',
  })
  @Max(604800, {
    message: 'TEMPLATE_SYNC_INTERVAL_S must be a whole number of seconds from 0 to 604800',
  })
  TEMPLATE_SYNC_INTERVAL_S = 3600;

  /**
   * How long a worker holds the campaign recipients it took. A worker that
   * dies leaves them this long: then what it had only taken is sent by
   * another, and what it was sending ends failed (send_uncertain). Keep it
   * above a send's longest (3 attempts of PLATFORM_TIMEOUT_MS and their
   * backoff): a send that ends later is still recorded as sent.
   */
  @Type(() => Number)
  @IsInt({ message: 'CAMPAIGN_LEASE_S must be a whole number of seconds from 1 to 3600' })
  @Min(1, { message: 'CAMPAIGN_LEASE_S must be a whole number of seconds from 1 to 3600' })
  @Max(3600, { message: 'CAMPAIGN_LEASE_S must be a whole number of seconds from 1 to 3600' })
  CAMPAIGN_LEASE_S = 60;

  /**
   * The share of the business's daily limit on new customers (the
   * platform's business_capability_update) its campaigns may use in any 24
   * hours; the rest stays for the conversations' own templates.
   */
  @Type(() => Number)
  @IsNumber({}, { message: 'CAMPAIGN_DAILY_LIMIT_SHARE must be a number from 0 to 1' })
  @Min(0, { message: 'CAMPAIGN_DAILY_LIMIT_SHARE must be a number from 0 to 1' })
  @Max(1, { message: 'CAMPAIGN_DAILY_LIMIT_SHARE must be a number from 0 to 1' })
  CAMPAIGN_DAILY_LIMIT_SHARE = 0.8;

  /**
   * A campaign recipient the platform keeps refusing for now (a code that
   * is neither an outage nor throttling) ends failed after 10 tries, the
   * first at least this long ago.
   */
  @Type(() => Number)
  @IsInt({ message: 'CAMPAIGN_RETRY_FOR_S must be a whole number of seconds from 0 to 604800' })
  @Min(0, { message: 'CAMPAIGN_RETRY_FOR_S must be a whole number of seconds from 0 to 604800' })
  @Max(604800, {
    message: 'CAMPAIGN_RETRY_FOR_S must be a whole number of seconds from 0 to 604800',
  })
  CAMPAIGN_RETRY_FOR_S = 3600;

  /** How long a handoff without `until` (or one the agent asked for) lasts. */
  @Type(() => Number)
  @IsNumber({}, { message: 'HANDOFF_DEFAULT_S must be a number of seconds from 1 to 2592000' })
  @Min(1, { message: 'HANDOFF_DEFAULT_S must be a number of seconds from 1 to 2592000' })
  @Max(2592000, { message: 'HANDOFF_DEFAULT_S must be a number of seconds from 1 to 2592000' })
  HANDOFF_DEFAULT_S = 86400;

  /** An inbound text that is exactly one of these (any case) opts its contact out. */
  @Transform(toList)
  @IsString({ each: true, message: 'OPT_OUT_WORDS must be words, comma-separated' })
  OPT_OUT_WORDS: string[] = ['STOP', 'PARAR', 'SAIR', 'CANCELAR', 'UNSUBSCRIBE'];

  /** An inbound text that is exactly one of these (any case) opts its contact back in. */
  @Transform(toList)
  @IsString({ each: true, message: 'OPT_IN_WORDS must be words, comma-separated' })
  OPT_IN_WORDS: string[] = ['START', 'VOLTAR', 'INICIAR', 'SUBSCRIBE'];

  @IsIn(LOG_LEVELS, { message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` })
  LOG_LEVEL: LogLevel = 'info';

  /**
   * The per-key rate in force. By default twice the number's send rate, so a
   * key never binds before the number's pacing does: one key can send at its
   * number's whole rate and still read (statuses, conversations) beside it.
   */
  get apiKeyRateLimit(): number {
    return this.API_KEY_RATE_LIMIT ?? 2 * this.PLATFORM_SEND_RATE;
  }

  /**
   * The per-key burst in force. By default 5 s of the key's rate: pacing
   * holds a burst of sends for up to 5 s before it refuses, so the key's
   * burst must take at least that many requests at once.
   */
  get apiKeyRateBurst(): number {
    return this.API_KEY_RATE_BURST ?? Math.max(1, Math.ceil(5 * this.apiKeyRateLimit));
  }

  get isProduction(): boolean {
    return this.NODE_ENV === 'production';
  }

  /** The stop and start words, upper-cased: never questions for the agent. */
  get notForTheAgent(): string[] {
    return [...this.OPT_OUT_WORDS, ...this.OPT_IN_WORDS].map((word) => word.trim().toUpperCase());
  }

  get runsHttpApi(): boolean {
    return this.APP_ROLE !== 'worker';
  }

  get runsWorkers(): boolean {
    return this.APP_ROLE !== 'api';
  }
}
