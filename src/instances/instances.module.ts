import { Module } from '@nestjs/common';
import { OutboundModule } from '../outbound/outbound.module.js';
import { InstanceStore } from './instance.store.js';
import { InstancesService } from './instances.service.js';

/** Instances without HTTP routes: shared by the API and the workers. */
@Module({
  imports: [OutboundModule],
  providers: [InstanceStore, InstancesService],
  exports: [InstancesService],
})
export class InstancesModule {}
