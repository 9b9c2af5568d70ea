import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { BUFFER_QUEUE } from '../common/queues.js';
import { InstanceStoreModule } from '../instances/instance-store.module.js';
import { SendingModule } from '../send/sending.module.js';
import { AgentClient } from './agent-client.service.js';
import { BufferProcessor } from './buffer.processor.js';
import { BufferService } from './buffer.service.js';

/** Buffers each contact's burst and hands it to the agent (APP_ROLE all or worker). */
@Module({
  imports: [BullModule.registerQueue({ name: BUFFER_QUEUE }), InstanceStoreModule, SendingModule],
  providers: [AgentClient, BufferService, BufferProcessor],
  exports: [BufferService],
})
export class AgentModule {}
