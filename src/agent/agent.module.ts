import { Module } from '@nestjs/common';
import { BUFFER_QUEUE, registerQueue } from '../queue/queues.js';
import { ContactsModule } from '../contacts/contacts.module.js';
import { InstancesModule } from '../instances/instances.module.js';
import { OutboundModule } from '../outbound/outbound.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { SendModule } from '../send/send.module.js';
import { TurnsModule } from '../turns/turns.module.js';
import { AgentClient } from './agent-client.js';
import { AgentSlots } from './agent-slots.js';
import { BufferProcessor } from './buffer.processor.js';
import { ContactBufferModule } from './contact-buffer.module.js';
import { ReplySender } from './reply-sender.js';
import { TurnRunner } from './turn-runner.js';
import { TurnSweeper } from './turn-sweeper.js';
import { TurnProcessor } from './turn.processor.js';

/** Buffers each contact's burst and runs its turns with the agent (APP_ROLE all or worker). */
@Module({
  imports: [
    registerQueue(BUFFER_QUEUE),
    ContactBufferModule,
    ContactsModule,
    InstancesModule,
    MessagesModule,
    OutboundModule,
    SendModule,
    TurnsModule,
  ],
  providers: [
    AgentClient,
    AgentSlots,
    ReplySender,
    TurnRunner,
    TurnSweeper,
    BufferProcessor,
    TurnProcessor,
  ],
  exports: [ContactBufferModule],
})
export class AgentModule {}
