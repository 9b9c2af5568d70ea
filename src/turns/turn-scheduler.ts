import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { TURN_QUEUE, TURN_RUN_JOB, type TurnRunJob } from '../queue/queues.js';

/**
 * Wakes a worker up to advance a turn, now or after a delay. A wake-up only
 * says "look at this turn": the turn's lease decides who works on it, so a
 * duplicate or stale one does nothing, and a lost one is replaced by the
 * sweeper from PostgreSQL.
 */
@Injectable()
export class TurnScheduler {
  constructor(@InjectQueue(TURN_QUEUE) private readonly queue: Queue<TurnRunJob>) {}

  async wake(turnId: string, delayMs = 0): Promise<void> {
    await this.queue.add(TURN_RUN_JOB, { turnId }, { delay: Math.max(0, Math.round(delayMs)) });
  }
}
