import { AppException } from '../common/app.exception.js';
import { MAX_EPOCH_MICROS } from '../common/epoch-micros.js';
import type {
  ArrivalPosition,
  ConversationMessage,
  StoredPosition,
} from '../messages/message.store.js';

/**
 * The cursors of a conversation. A message's `position` (and a page's
 * `older`) is its place in arrival order (ArrivalPosition: the second of its
 * time, when it reached the service, its seq), each as fixed-width hex, so
 * positions sort as strings the way the conversation does. `newer` is a place in the order messages were
 * stored: `<transaction>.<seq>`. A plain number is a cursor of an earlier
 * version (a seq), still taken.
 */

const SECOND_HEX = 10; // 16^10 s and 16^15 µs reach past the year 9999
const TIME_HEX = 15;
const SEQ_HEX = 16;
const MAX_SECOND = MAX_EPOCH_MICROS / 1_000_000n;
const INT8_MAX = 2n ** 63n - 1n;

export const POSITION_PATTERN = /^[0-9a-f]{41}$/;
export const FOLLOW_PATTERN = /^\d{1,19}\.\d{1,19}$/;
export const EARLIER_VERSION_PATTERN = /^\d{1,18}$/;

const hex = (value: bigint | string, width: number): string =>
  BigInt(value).toString(16).padStart(width, '0');

/** A message's place in arrival order, as the API shows it. */
export function arrivalPosition(message: ConversationMessage): string {
  return (
    hex(BigInt(message.created_us) / 1_000_000n, SECOND_HEX) +
    hex(message.received_us, TIME_HEX) +
    hex(message.seq, SEQ_HEX)
  );
}

/** The `newer` cursor for a place in the order messages were stored. */
export function followCursor(position: StoredPosition): string {
  return `${position.tx}.${position.seq}`;
}

/** A message's place in the order messages were stored. */
export function storedPosition(message: ConversationMessage): StoredPosition {
  return { tx: BigInt(message.stored_tx), seq: BigInt(message.seq) };
}

/** A `before` cursor: a position, or the seq of an earlier version's cursor. */
export function decodeBefore(value: string): ArrivalPosition | { earlierSeq: bigint } {
  if (EARLIER_VERSION_PATTERN.test(value)) return { earlierSeq: BigInt(value) };
  if (POSITION_PATTERN.test(value)) {
    const second = BigInt(`0x${value.slice(0, SECOND_HEX)}`);
    const receivedUs = BigInt(`0x${value.slice(SECOND_HEX, SECOND_HEX + TIME_HEX)}`);
    const seq = BigInt(`0x${value.slice(SECOND_HEX + TIME_HEX)}`);
    if (second <= MAX_SECOND && receivedUs <= MAX_EPOCH_MICROS && seq <= INT8_MAX) {
      return { second, receivedUs, seq };
    }
  }
  throw AppException.validation([{ field: 'before', message: 'must be a cursor from older' }]);
}

/**
 * An `after` cursor. An earlier version's (a seq, from before positions of
 * storing were kept) follows from that seq among the messages stored then,
 * which all read as transaction 0, and takes every message stored since.
 */
export function decodeAfter(value: string): StoredPosition {
  if (EARLIER_VERSION_PATTERN.test(value)) return { tx: 0n, seq: BigInt(value) };
  if (FOLLOW_PATTERN.test(value)) {
    const [tx, seq] = value.split('.').map((part) => BigInt(part));
    if (tx <= INT8_MAX && seq <= INT8_MAX) return { tx, seq };
  }
  throw AppException.validation([{ field: 'after', message: 'must be a cursor from newer' }]);
}
