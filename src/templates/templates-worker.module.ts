import { Module } from '@nestjs/common';
import { registerQueue, TEMPLATE_SYNC_QUEUE } from '../queue/queues.js';
import { TemplateSyncProcessor } from './template-sync.processor.js';
import { TemplatesModule } from './templates.module.js';

/** Catalogue syncs on request and on the interval (APP_ROLE all or worker). */
@Module({
  imports: [TemplatesModule, registerQueue(TEMPLATE_SYNC_QUEUE)],
  providers: [TemplateSyncProcessor],
})
export class TemplatesWorkerModule {}
