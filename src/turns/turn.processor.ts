import { Processor } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { GracefulWorkerHost } from '../queue/graceful-worker-host.js';
import { TURN_QUEUE, type TurnRunJob } from '../queue/queues.js';
import { TurnRunner, type TurnStep } from './turn-runner.js';

/** Thin: a turn's retry is due, or it is resumed after its worker died. */
@Processor(TURN_QUEUE, { concurrency: 32 })
export class TurnProcessor extends GracefulWorkerHost {
  constructor(private readonly runner: TurnRunner) {
    super();
  }

  process(job: Job<TurnRunJob>): Promise<TurnStep> {
    return this.runner.run(job.data.turnId);
  }
}
