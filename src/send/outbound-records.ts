import { InjectQueue, Processor } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
import { GracefulWorkerHost } from '../common/graceful-worker-host.js';
import { OUTBOUND_RECORD_JOB, OUTBOUND_RECORD_QUEUE } from '../common/queues.js';
import { MessagesService, type OutboundRecord } from '../messages/messages.service.js';

/**
 * Where the record of an accepted send waits when PostgreSQL cannot take it
 * (the message went out: answering an error would invite a duplicate). A
 * worker writes it once PostgreSQL is back, retrying for about a day.
 */
@Injectable()
export class OutboundRecordQueue {
  constructor(@InjectQueue(OUTBOUND_RECORD_QUEUE) private readonly queue: Queue<OutboundRecord>) {}

  async park(record: OutboundRecord): Promise<void> {
    await this.queue.add(OUTBOUND_RECORD_JOB, record, {
      attempts: 30,
      backoff: { type: 'exponential', delay: 2000 },
      removeOnComplete: true,
      removeOnFail: { age: 7 * 24 * 3600 },
    });
  }
}

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
