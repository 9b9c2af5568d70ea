import { Processor } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { MessagesService, type OutboundRecord } from '../messages/messages.service.js';
import { GracefulWorkerHost } from '../queue/graceful-worker-host.js';
import { OUTBOUND_RECORD_QUEUE } from '../queue/queues.js';

/** Thin: writes a parked record; failures throw so BullMQ retries. */
@Processor(OUTBOUND_RECORD_QUEUE, { concurrency: 4 })
export class OutboundRecordProcessor extends GracefulWorkerHost {
  constructor(private readonly messages: MessagesService) {
    super();
  }

  async process(job: Job<OutboundRecord>): Promise<void> {
    await this.messages.storeOutbound([job.data]);
  }
}
