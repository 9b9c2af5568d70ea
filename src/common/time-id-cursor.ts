import { isUUID } from 'class-validator';
import { thrownBy, type DocumentedError } from './api-errors.js';
import { AppException } from './app.exception.js';
import { isoFromEpochMicros, parseEpochMicros } from './epoch-micros.js';

/** A row's place in a listing sorted by a time, then an id. */
export interface TimeIdCursor {
  /** The time in microseconds since the epoch (digits), exact as PostgreSQL keeps it. */
  atMicros: string;
  id: string;
}

/** A cursor as a query binds it: the time as ISO text that PostgreSQL reads exactly. */
export interface TimeIdPosition {
  at: string;
  id: string;
}

/** The opaque `next_cursor` a listing answers. */
export function encodeCursor({ atMicros, id }: TimeIdCursor): string {
  return Buffer.from(JSON.stringify([atMicros, id])).toString('base64url');
}

/**
 * A `cursor` a client sends back; 400 validation_failed when it is not one
 * of ours. Only digits in range and a UUID get through, so nothing that
 * PostgreSQL would refuse reaches it.
 */
export function decodeCursor(value: string): TimeIdPosition {
  try {
    const [at, id] = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as unknown[];
    const micros = parseEpochMicros(at);
    if (micros !== null && typeof id === 'string' && isUUID(id)) {
      return { at: isoFromEpochMicros(micros), id };
    }
  } catch {
    // reported below
  }
  throw AppException.validation([
    { field: 'cursor', message: 'must be a cursor from next_cursor' },
  ]);
}

/** The API description's example of a cursor not from `next_cursor`. */
export const BAD_CURSOR: DocumentedError = thrownBy(
  () => decodeCursor('MQ'),
  'cursor is not a next_cursor of this listing',
);
