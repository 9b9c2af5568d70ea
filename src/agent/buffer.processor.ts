import { Processor } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { GracefulWorkerHost } from '../common/graceful-worker-host.js';
import { BUFFER_QUEUE, type BufferFlushJob } from '../common/queues.js';
import { BufferService, type BatchOutcome } from './buffer.service.js';

/** Thin: one contact's buffer goes to the agent. */
@Processor(BUFFER_QUEUE, { concurrency: 32 })
export class BufferProcessor extends GracefulWorkerHost {
  constructor(private readonly buffers: BufferService) {
    super();
  }

  process(job: Job<BufferFlushJob>): Promise<BatchOutcome> {
    return this.buffers.flush(job.data.instanceId, job.data.contact);
  }
}
