import { isUUID } from 'class-validator';
import { AppException } from './app.exception.js';

/** A keyset position in a listing sorted by a time (as PostgreSQL prints it), then an id. */
export interface TimeIdCursor {
  at: string;
  id: string;
}

/** The opaque `next_cursor` a listing answers. */
export function encodeCursor({ at, id }: TimeIdCursor): string {
  return Buffer.from(JSON.stringify([at, id])).toString('base64url');
}

/** A `cursor` a client sends back; 400 validation_failed when it is not one of ours. */
export function decodeCursor(value: string): TimeIdCursor {
  try {
    const [at, id] = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as unknown[];
    if (
      typeof at === 'string' &&
      !Number.isNaN(Date.parse(at)) &&
      typeof id === 'string' &&
      isUUID(id)
    ) {
      return { at, id };
    }
  } catch {
    // reported below
  }
  throw AppException.validation([
    { field: 'cursor', message: 'must be a cursor from next_cursor' },
  ]);
}
