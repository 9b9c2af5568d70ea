import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { BUFFER_QUEUE } from '../common/queues.js';
import { InstanceStoreModule } from '../instances/instance-store.module.js';
import { MessageStoreModule } from '../messages/message-store.module.js';
import { SendingModule } from '../send/sending.module.js';
import { TurnStoreModule } from '../turns/turn-store.module.js';
import { AgentClient } from './agent-client.service.js';
import { BufferProcessor } from './buffer.processor.js';
import { DeliveryBacklog } from '../webhook/delivery-backlog.js';
import { ContactBuffer } from './contact-buffer.service.js';
import { ReplySender } from './reply-sender.service.js';
import { TurnRunner } from './turn-runner.service.js';
import { TurnSweeper } from './turn-sweeper.service.js';
import { TurnProcessor } from './turn.processor.js';

/** Buffers each contact's burst and runs its turns with the agent (APP_ROLE all or worker). */
@Module({
  imports: [
    BullModule.registerQueue({ name: BUFFER_QUEUE }),
    InstanceStoreModule,
    MessageStoreModule,
    SendingModule,
    TurnStoreModule,
  ],
  providers: [
    AgentClient,
    ContactBuffer,
    DeliveryBacklog,
    ReplySender,
    TurnRunner,
    TurnSweeper,
    BufferProcessor,
    TurnProcessor,
  ],
  exports: [ContactBuffer],
})
export class AgentModule {}
