import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { OUTBOUND_RECORD_JOB, OUTBOUND_RECORD_QUEUE } from '../queue/queues.js';
import type { OutboundRecord } from '../messages/messages.service.js';

/**
 * Where the record of an accepted send waits when PostgreSQL cannot take it
 * (the message went out: answering an error would invite a duplicate). A
 * worker writes it once PostgreSQL is back (see JOB_OPTIONS).
 */
@Injectable()
export class OutboundRecordQueue {
  constructor(@InjectQueue(OUTBOUND_RECORD_QUEUE) private readonly queue: Queue<OutboundRecord>) {}

  async park(record: OutboundRecord): Promise<void> {
    await this.queue.add(OUTBOUND_RECORD_JOB, record);
  }
}
