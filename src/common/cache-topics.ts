/** Invalidation topics of the request-path caches (CacheInvalidationService). */
export const INSTANCE_TOPIC = 'instance';
export const API_KEY_TOPIC = 'api-key';
/** A contact's send window (key `instanceId:address`): dropped when it opts out. */
export const WINDOW_TOPIC = 'window';

/**
 * Upper bound on how long a cached instance or API key may outlive a change
 * whose invalidation message was lost (Redis away); normally changes reach
 * every process within milliseconds.
 */
export const REQUEST_PATH_CACHE_TTL_MS = 10_000;
/** An account (key: its id): changed, disabled or given a new password. */
export const ACCOUNT_TOPIC = 'account';
