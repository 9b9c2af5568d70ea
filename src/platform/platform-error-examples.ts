import type { DocumentedError } from '../common/api-errors.js';
import { PlatformError } from './platform.errors.js';

/**
 * The platform's failures as the API description shows them: each the
 * PlatformError the client throws for such an answer.
 */
const FBTRACE_ID = 'A7qKxYbZ3Lm9PqRsTuVw1X2';

/** The platform refused the call with `code` and `message` (its own words). */
export function platformRejected(code: number, message: string, summary?: string): DocumentedError {
  return {
    error: new PlatformError({
      kind: 'rejected',
      httpStatus: 400,
      platformCode: code,
      platformMessage: message,
      fbtraceId: FBTRACE_ID,
    }),
    summary: summary ?? `the platform refused it (${code})`,
  };
}

/** The instance's access token is invalid or expired (code 190). */
export const PLATFORM_INVALID_TOKEN: DocumentedError = {
  error: new PlatformError({
    kind: 'rejected',
    httpStatus: 401,
    platformCode: 190,
    platformMessage: 'Error validating access token: Session has expired.',
    fbtraceId: FBTRACE_ID,
  }),
  summary: 'the access token is invalid or expired (190)',
};

/** The platform kept failing (5xx) through every retry. */
export const PLATFORM_UNAVAILABLE: DocumentedError = {
  error: new PlatformError({ kind: 'unavailable', httpStatus: 503 }),
  summary: 'the platform failed after retries',
};

/** A send reached the platform and got no answer: it is not repeated. */
export const PLATFORM_SEND_TIMED_OUT: DocumentedError = {
  error: new PlatformError({
    kind: 'unavailable',
    networkCode: 'ETIMEDOUT',
    mayHaveBeenSent: true,
  }),
  summary: 'no answer in time: the message may have been sent',
};

/** The platform throttles the number and the wait is longer than a send may hold. */
export const PLATFORM_THROTTLED: DocumentedError = {
  error: new PlatformError({
    kind: 'rate_limited',
    platformCode: 130429,
    platformMessage: '(#130429) Rate limit hit',
    fbtraceId: FBTRACE_ID,
    retryAfterSeconds: 4,
  }),
  summary: 'the platform throttles the number',
};
