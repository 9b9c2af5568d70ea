import { InjectQueue, Processor } from '@nestjs/bullmq';
import { Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
import { AppConfig } from '../config/app-config.js';
import { GracefulWorkerHost } from '../queue/graceful-worker-host.js';
import {
  TEMPLATE_SYNC_ALL_JOB,
  TEMPLATE_SYNC_QUEUE,
  type TemplateSyncJob,
} from '../queue/queues.js';
import { TemplatesService } from './templates.service.js';

const SCHEDULER_ID = 'template-sync-all';

/** Thin: runs one account's sync, or every account's; a failure throws so BullMQ retries. */
@Processor(TEMPLATE_SYNC_QUEUE, { concurrency: 2 })
export class TemplateSyncProcessor extends GracefulWorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger(TemplateSyncProcessor.name);

  constructor(
    private readonly templates: TemplatesService,
    private readonly config: AppConfig,
    @InjectQueue(TEMPLATE_SYNC_QUEUE) private readonly queue: Queue<TemplateSyncJob>,
  ) {
    super();
  }

  /**
   * One scheduler for all workers (BullMQ keeps it by id); 0 removes it. Not
   * awaited: with Redis away the boot goes on, and the schedule is set once
   * Redis answers.
   */
  onApplicationBootstrap(): void {
    const every = this.config.TEMPLATE_SYNC_INTERVAL_S * 1000;
    const scheduled =
      every > 0
        ? this.queue.upsertJobScheduler(SCHEDULER_ID, { every }, { name: TEMPLATE_SYNC_ALL_JOB })
        : this.queue.removeJobScheduler(SCHEDULER_ID);
    scheduled.catch((error: unknown) => {
      this.logger.warn({ err: (error as Error).message }, 'the template sync schedule was not set');
    });
  }

  async process(job: Job<TemplateSyncJob>): Promise<void> {
    if (job.name === TEMPLATE_SYNC_ALL_JOB) await this.templates.syncAll();
    else if (job.data.instanceId) await this.templates.syncInstance(job.data.instanceId);
  }
}
