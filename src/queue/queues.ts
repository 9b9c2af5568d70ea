/** Queue and job names, with their payload types: the one place they are declared. */

/**
 * Signed webhook deliveries: a Redis stream, written with one XADD before the
 * 200 goes out, read by the workers' consumer group in batches (see
 * webhook/delivery-consumer.ts). Entries a worker could not process stay
 * pending and are taken over; entries that fail too often go to the dead stream.
 */
export const WEBHOOK_STREAM = 'webhook:deliveries';
export const WEBHOOK_GROUP = 'workers';
export const WEBHOOK_DEAD_STREAM = 'webhook:dead';

export interface WebhookDelivery {
  /** The delivery exactly as received (its signature was checked over these bytes). */
  body: string;
  /** When it was received (ms since epoch). */
  receivedAt: number;
}

/** One delayed, debounced job per (instance, contact): when it runs, the buffer goes to the agent. */
export const BUFFER_QUEUE = 'contact-buffers';
export const BUFFER_FLUSH_JOB = 'flush';

export interface BufferFlushJob {
  instanceId: string;
  contactId: string;
  /** When the buffer was due when the job was armed (ms since epoch); absent in older jobs. */
  dueAt?: number;
}

/** Wake-ups of one turn: a delayed retry, or a resume after its worker died. PostgreSQL holds the state. */
export const TURN_QUEUE = 'turns';
export const TURN_RUN_JOB = 'run';

export interface TurnRunJob {
  turnId: string;
}

/** Records of sends the platform accepted while PostgreSQL was away: written once it is back. */
export const OUTBOUND_RECORD_QUEUE = 'outbound-records';
export const OUTBOUND_RECORD_JOB = 'record';
