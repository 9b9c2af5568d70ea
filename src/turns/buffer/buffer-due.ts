import type { AwaitingSpan } from '../../messages/message.types.js';

/**
 * The buffer's due rule, stated here only: a contact's waiting messages are due
 * `delayMs` (MESSAGE_BUFFER_DELAY) after the last one, and no later than
 * `maxWaitMs` (MESSAGE_BUFFER_MAX_WAIT) after the first; each is the instance's
 * own when it has one (InstancesService.bufferTiming). While the workers are
 * behind the webhook, quiet gaps cannot be seen yet: only the max wait counts.
 * ContactBuffer arms flushes by `bufferDueAt`; TurnStore's claim and its
 * sweep for overdue buffers test the same rule in SQL (`bufferDueSql`).
 */
export interface BufferTiming {
  delayMs: number;
  maxWaitMs: number;
}

/** When a buffer spanning `span` is due (ms since epoch), live or `behind` a backlog. */
export function bufferDueAt(
  span: AwaitingSpan,
  behind: boolean,
  { delayMs, maxWaitMs }: BufferTiming,
): number {
  const maxWait = span.first.getTime() + maxWaitMs;
  return behind ? maxWait : Math.min(span.last.getTime() + delayMs, maxWait);
}

/**
 * The rule as an SQL timestamptz, from SQL operands: the times of the first
 * and last waiting messages and the two timings in ms (float8). A NULL delay
 * (behind a backlog) leaves the max wait alone: LEAST ignores NULLs.
 */
export function bufferDueSql(operands: {
  first: string;
  last: string;
  delayMs: string;
  maxWaitMs: string;
}): string {
  const { first, last, delayMs, maxWaitMs } = operands;
  return `LEAST(${last} + ${delayMs} * interval '1 millisecond',
                ${first} + ${maxWaitMs} * interval '1 millisecond')`;
}
