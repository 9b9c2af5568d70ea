import { Logger } from '@nestjs/common';
import type { Queue } from 'bullmq';

/** A connection error repeats on every reconnect attempt: one line per queue or worker this often. */
const LOG_EVERY_MS = 30_000;

const logger = new Logger('Queues');

/**
 * A throttled logger for the connection errors of one queue or worker, so
 * that BullMQ, finding no listener, does not print raw stack traces to the
 * console while Redis is away. Health and readiness report the outage; the
 * connection comes back by itself.
 */
export function connectionErrorLogger(name: () => string | undefined): (error: Error) => void {
  let lastLogged = 0;
  return (error) => {
    const now = Date.now();
    if (now - lastLogged < LOG_EVERY_MS) return;
    lastLogged = now;
    logger.warn({ queue: name(), err: error.message }, 'queue connection error (retrying)');
  };
}

/** Listens for a queue's connection errors (see connectionErrorLogger). */
export function logQueueErrors(queue: Queue): Queue {
  queue.on(
    'error',
    connectionErrorLogger(() => queue.name),
  );
  return queue;
}
