import { AppException } from '../common/app.exception.js';

/** HTTP statuses after which the same call may succeed. */
export const RETRYABLE_HTTP_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/** Platform error codes documented as transient (throttling, temporary outages). */
export const RETRYABLE_PLATFORM_CODES: ReadonlySet<number> = new Set([
  1, 2, 4, 80007, 130429, 131000, 131016, 131057, 133004,
]);

/** Codes that mean "slow down": the final answer is 429 with Retry-After. */
export const THROTTLING_PLATFORM_CODES: ReadonlySet<number> = new Set([4, 80007, 130429, 131056]);

/** The wait suggested for throttling the platform gave no Retry-After for (the sends' pacer knows better). */
const DEFAULT_RETRY_AFTER_S = 5;

/** Token invalid or expired. */
export const INVALID_TOKEN_PLATFORM_CODE = 190;

/** This message type cannot go to a business-scoped user id (e.g. some authentication templates). */
export const NEEDS_PHONE_NUMBER_PLATFORM_CODE = 131062;

/** Network failures after which a call may be repeated. */
export const RETRYABLE_NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ECONNABORTED',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ENETUNREACH',
  'EHOSTUNREACH',
]);

/** Network failures where the request surely never reached the platform: safe to repeat a send. */
export const NOT_SENT_NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ENETUNREACH',
  'EHOSTUNREACH',
]);

/** The platform's error object, as its API returns it under `error`. */
export interface PlatformErrorBody {
  message?: string;
  type?: string;
  code?: number;
  error_subcode?: number;
  fbtrace_id?: string;
  error_data?: { details?: string };
}

export type PlatformFailureKind = 'rejected' | 'rate_limited' | 'unavailable';

export interface PlatformFailure {
  kind: PlatformFailureKind;
  /** The platform's HTTP status, when it answered. */
  httpStatus?: number;
  platformCode?: number;
  platformMessage?: string;
  fbtraceId?: string;
  /** Seconds to wait before trying again (rate limiting). */
  retryAfterSeconds?: number;
  /** The network error when the platform did not answer (ECONNREFUSED, ETIMEDOUT…). */
  networkCode?: string;
  /** A send reached the platform and got no answer (timeout, connection cut): it may have been delivered. */
  mayHaveBeenSent?: boolean;
}

function describe(failure: PlatformFailure): string {
  if (failure.platformCode === INVALID_TOKEN_PLATFORM_CODE) {
    return "The platform refused the instance's access token (invalid or expired): an admin must update it with PATCH /admin/instances/{id} and a new access_token";
  }
  if (failure.platformCode === NEEDS_PHONE_NUMBER_PLATFORM_CODE) {
    return 'This message type cannot be sent to a user id (recipient): send it to the phone number (to)';
  }
  if (failure.kind === 'rate_limited') {
    return `The platform is throttling this number${failure.platformMessage ? `: ${failure.platformMessage}` : ''}; retry after ${failure.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_S} s`;
  }
  if (failure.kind === 'unavailable') {
    if (failure.mayHaveBeenSent) {
      const what =
        failure.networkCode === undefined
          ? (failure.platformMessage ?? 'The platform gave an unreadable answer')
          : failure.networkCode === 'ETIMEDOUT' || failure.networkCode === 'ECONNABORTED'
            ? 'The platform did not answer in time'
            : 'The connection to the platform broke before it answered';
      return `${what}; the message may have been sent, so it was not retried (check the number before sending again)`;
    }
    if (failure.httpStatus) return `The platform failed with HTTP ${failure.httpStatus}`;
    return failure.platformMessage
      ? `The platform failed: ${failure.platformMessage}`
      : 'The platform could not be reached';
  }
  return `The platform refused the request${failure.platformMessage ? `: ${failure.platformMessage}` : ''}`;
}

const CODE_BY_KIND = {
  rejected: 'platform_rejected',
  rate_limited: 'platform_rate_limited',
  unavailable: 'platform_unavailable',
} as const;

/**
 * A failed platform call, carrying what the platform said. It is an
 * AppException, so an unhandled one answers with the contract's body.
 */
export class PlatformError extends AppException {
  constructor(readonly failure: PlatformFailure) {
    super(
      CODE_BY_KIND[failure.kind],
      describe(failure),
      failure.platformCode !== undefined || failure.fbtraceId !== undefined
        ? [
            {
              code: failure.platformCode ?? null,
              message: failure.platformMessage ?? null,
              fbtrace_id: failure.fbtraceId ?? null,
            },
          ]
        : undefined,
      failure.kind === 'rate_limited'
        ? { 'retry-after': String(failure.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_S) }
        : undefined,
    );
    this.name = 'PlatformError';
  }
}

/**
 * What a later attempt of the same send could achieve, for work that retries
 * on its own schedule (the agent's replies): `retry` when the platform was
 * away or throttling, `uncertain` when the message may already have gone out
 * (never repeated), `final` when the platform refused it.
 */
export type SendRetryDisposition =
  { kind: 'retry'; retryAfterMs?: number } | { kind: 'uncertain' } | { kind: 'final' };

export function sendRetryDisposition(failure: PlatformFailure): SendRetryDisposition {
  if (failure.mayHaveBeenSent) return { kind: 'uncertain' };
  if (failure.kind === 'rate_limited') {
    return {
      kind: 'retry',
      retryAfterMs:
        failure.retryAfterSeconds === undefined ? undefined : failure.retryAfterSeconds * 1000,
    };
  }
  if (failure.kind === 'unavailable') return { kind: 'retry' };
  if (failure.platformCode !== undefined && RETRYABLE_PLATFORM_CODES.has(failure.platformCode)) {
    return { kind: 'retry' };
  }
  return { kind: 'final' };
}
