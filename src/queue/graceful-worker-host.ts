import { OnWorkerEvent, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { REDIS_CLIENT } from '../redis/redis.constants.js';
import { connectionErrorLogger } from './queue-error-logger.js';

/** Longest shutdown waits for a worker's active jobs before abandoning them (BullMQ re-runs them). */
const WORKER_DRAIN_MS = 20_000;

/**
 * A processor whose worker closes before Nest's own shutdown hooks: it lets
 * active jobs finish when Redis answers, and closes at once when Redis is
 * away (a plain close would wait for Redis forever). BullMQ's later close()
 * joins this one.
 */
export abstract class GracefulWorkerHost extends WorkerHost implements BeforeApplicationShutdown {
  @Inject(REDIS_CLIENT) private readonly redis: Redis;
  private readonly jobLogger = new Logger('Jobs');

  /** A failed attempt is logged; BullMQ retries it per the job's options. */
  @OnWorkerEvent('failed')
  onJobFailed(job: Job | undefined, error: Error): void {
    this.jobLogger.warn(
      { queue: job?.queueName, jobId: job?.id, attempt: job?.attemptsMade, err: error.message },
      'job failed',
    );
  }

  /** Connection errors (Redis away) are logged like the queues' own, not printed raw by BullMQ. */
  @OnWorkerEvent('error')
  onWorkerError(error: Error): void {
    this.logConnectionError(error);
  }

  private readonly logConnectionError = connectionErrorLogger(() => this.worker?.name);

  async beforeApplicationShutdown(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    if (this.redis.status !== 'ready') {
      await worker.close(true);
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const forced = new Promise<void>((resolve) => {
      timer = setTimeout(() => void worker.close(true).then(resolve, resolve), WORKER_DRAIN_MS);
    });
    await Promise.race([worker.close(), forced]);
    clearTimeout(timer);
  }
}
