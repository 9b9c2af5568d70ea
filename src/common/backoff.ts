/** Exponential backoff bounds: the first wait is about `baseDelayMs`, doubling up to `maxDelayMs`. */
export interface Backoff {
  baseDelayMs: number;
  maxDelayMs: number;
}

/** Exponential backoff with jitter: attempt 1 waits about base, then 2×, 4×… up to the cap. */
export function backoffDelay(attempt: number, policy: Backoff, random = Math.random): number {
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(exponential / 2 + random() * (exponential / 2));
}

/**
 * A `Retry-After` header in milliseconds: delay-seconds or an HTTP date;
 * undefined when absent or unreadable.
 */
export function retryAfterMs(header: unknown, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? (header as unknown[])[0] : header;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}
