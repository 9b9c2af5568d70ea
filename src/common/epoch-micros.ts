/**
 * Times as PostgreSQL keeps them: whole microseconds since 1970-01-01 UTC.
 * Cursors carry times this way (digits only), so a cursor is exact and no
 * text the client made up reaches PostgreSQL's date parser.
 */

/** 9999-12-31T23:59:59.999999Z: the last instant with a four-digit year, which both sides read. */
export const MAX_EPOCH_MICROS = 253_402_300_799_999_999n;

/** Digits of microseconds since the epoch, within [0, MAX_EPOCH_MICROS]; null otherwise. */
export function parseEpochMicros(value: unknown): bigint | null {
  if (typeof value !== 'string' || !/^\d{1,18}$/.test(value)) return null;
  const micros = BigInt(value);
  return micros <= MAX_EPOCH_MICROS ? micros : null;
}

/** The ISO 8601 UTC text of a time in microseconds (six decimals), which PostgreSQL reads exactly. */
export function isoFromEpochMicros(micros: bigint): string {
  if (micros < 0n || micros > MAX_EPOCH_MICROS) throw new RangeError('time out of range');
  const millis = new Date(Number(micros / 1000n)).toISOString(); // …T12:34:56.789Z
  return `${millis.slice(0, -1)}${String(micros % 1000n).padStart(3, '0')}Z`;
}
