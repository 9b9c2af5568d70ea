import { AppException } from './app.exception.js';

/** Network failures of a connection to a dependency. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** What pg and ioredis say when the server is away or too slow, in their own words. */
const UNAVAILABLE_MESSAGES = [
  /Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Query read timeout/i,
  /Client has encountered a connection error/i,
  /Connection is closed/i,
  /Stream isn't writeable/i,
  /max retries per request/i,
  /Command timed out/i,
];

/** PostgreSQL states for a server that cannot serve now: connection exceptions, shutdown, overload. */
function unavailableSqlState(code: string): boolean {
  return code.startsWith('08') || ['57P01', '57P02', '57P03', '53300'].includes(code);
}

/** Whether an error means PostgreSQL or Redis cannot be reached (or answered too late). */
export function isDependencyUnavailable(error: unknown): boolean {
  let cause: unknown = error;
  for (let depth = 0; cause instanceof Error && depth < 4; depth++) {
    const withCode = cause as Error & { code?: unknown; driverError?: unknown; cause?: unknown };
    const code = typeof withCode.code === 'string' ? withCode.code : undefined;
    if (code && (CONNECTION_CODES.has(code) || unavailableSqlState(code))) return true;
    if (UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(withCode.message))) return true;
    cause = withCode.driverError ?? withCode.cause;
  }
  return false;
}

/** The answer when a dependency is away: 503 with Retry-After, so clients and the platform retry. */
export function unavailable(): AppException {
  return new AppException(
    'unavailable',
    'The service cannot reach its database or cache right now; retry shortly',
    undefined,
    { 'retry-after': '5' },
  );
}

/**
 * The answer of every route but the health probes while the process starts:
 * it waits for `awaited` (e.g. PostgreSQL) to answer, or, with none, is booting.
 */
export function starting(awaited: string[]): AppException {
  const what = awaited.length > 0 ? `waits for ${awaited.join(' and ')} to answer` : 'is booting';
  return new AppException(
    'unavailable',
    `The service is starting and ${what}; retry shortly`,
    undefined,
    { 'retry-after': '5' },
  );
}
