import { Module } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module.js';
import { registerQueue, TEMPLATE_SYNC_QUEUE } from '../queue/queues.js';
import { TemplateStore } from './template.store.js';
import { TemplatesService } from './templates.service.js';

/**
 * The template catalogue without routes: its store (written by the webhook
 * workers too) and the service that syncs, manages and checks templates.
 */
@Module({
  imports: [InstancesModule, registerQueue(TEMPLATE_SYNC_QUEUE)],
  providers: [TemplateStore, TemplatesService],
  exports: [TemplateStore, TemplatesService],
})
export class TemplatesModule {}
