import { Processor } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { GracefulWorkerHost } from '../../queue/graceful-worker-host.js';
import { BUFFER_QUEUE, type BufferFlushJob } from '../../queue/queues.js';
import { TurnRunner, type TurnStep } from '../turn-runner.js';

/** Thin: a contact's buffer is due, its messages become a turn. Failures throw so BullMQ retries. */
@Processor(BUFFER_QUEUE, { concurrency: 32 })
export class BufferProcessor extends GracefulWorkerHost {
  constructor(private readonly runner: TurnRunner) {
    super();
  }

  process(job: Job<BufferFlushJob>): Promise<TurnStep> {
    return this.runner.startTurn(job.data);
  }
}
