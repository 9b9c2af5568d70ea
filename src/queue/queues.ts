import { BullModule, getQueueToken } from '@nestjs/bullmq';
import type { DynamicModule } from '@nestjs/common';
import type { DefaultJobOptions, Queue } from 'bullmq';
import { logQueueErrors } from './queue-error-logger.js';

/** Queue and job names, their payload types and job options: the one place they are declared. */

/**
 * Signed webhook deliveries: a Redis stream, written with one XADD before the
 * 200 goes out, read by the workers' consumer group in batches (see
 * webhook-stream/delivery-consumer.ts). Entries a worker could not process stay
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

/**
 * Template catalogue syncs: one account's on request (an instance created, its
 * token changed, the platform saying a template moved), deduplicated per
 * account, and every account's every TEMPLATE_SYNC_INTERVAL_S (a job scheduler).
 */
export const TEMPLATE_SYNC_QUEUE = 'template-syncs';
export const TEMPLATE_SYNC_JOB = 'sync';
export const TEMPLATE_SYNC_ALL_JOB = 'sync-all';

export interface TemplateSyncJob {
  /** The instance whose token reads its account's catalogue; absent for sync-all. */
  instanceId?: string;
}

export type QueueName =
  | typeof BUFFER_QUEUE
  | typeof TURN_QUEUE
  | typeof OUTBOUND_RECORD_QUEUE
  | typeof TEMPLATE_SYNC_QUEUE;

/** Every BullMQ queue (the webhook stream is not one), as the dashboard lists them. */
export const QUEUE_NAMES: QueueName[] = [
  BUFFER_QUEUE,
  TURN_QUEUE,
  OUTBOUND_RECORD_QUEUE,
  TEMPLATE_SYNC_QUEUE,
];

/** How each queue's jobs are retried and kept. Jobs add their own delay and deduplication. */
export const JOB_OPTIONS: Record<QueueName, DefaultJobOptions> = {
  // A flush that fails (the database away) is tried again; the sweeper backs this up.
  [BUFFER_QUEUE]: {
    attempts: 8,
    backoff: { type: 'exponential', delay: 1000 },
    removeOnComplete: { count: 1000 },
    removeOnFail: { age: 7 * 24 * 3600 },
  },
  // A failed wake-up is tried again; the turn stays in PostgreSQL meanwhile.
  [TURN_QUEUE]: {
    attempts: 8,
    backoff: { type: 'exponential', delay: 1000 },
    removeOnComplete: true,
    removeOnFail: { age: 24 * 3600 },
  },
  // A sync the platform or the database failed is tried again; the next interval's covers it too.
  [TEMPLATE_SYNC_QUEUE]: {
    attempts: 5,
    backoff: { type: 'exponential', delay: 5000 },
    removeOnComplete: true,
    removeOnFail: { age: 24 * 3600 },
  },
  // Written once PostgreSQL is back, retrying for about a day.
  [OUTBOUND_RECORD_QUEUE]: {
    attempts: 30,
    backoff: { type: 'exponential', delay: 2000 },
    removeOnComplete: true,
    removeOnFail: { age: 7 * 24 * 3600 },
  },
};

/** The one way a module gets a queue: registered with its job options, its errors logged. */
export function registerQueue(name: QueueName): DynamicModule {
  const registered = BullModule.registerQueue({ name, defaultJobOptions: JOB_OPTIONS[name] });
  return {
    ...registered,
    providers: [
      ...(registered.providers ?? []),
      {
        // Runs as soon as the queue exists, before it can fail to connect.
        provide: `${name}:error-listener`,
        inject: [getQueueToken(name)],
        useFactory: (queue: Queue) => logQueueErrors(queue),
      },
    ],
  };
}
