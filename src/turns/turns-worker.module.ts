import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module.js';
import { CampaignsModule } from '../campaigns/campaigns.module.js';
import { MediaLinksModule } from '../media/media-links.module.js';
import { ContactsModule } from '../contacts/contacts.module.js';
import { BUFFER_QUEUE, registerQueue } from '../queue/queues.js';
import { InstancesModule } from '../instances/instances.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { SendModule } from '../send/send.module.js';
import { BufferModule } from './buffer/buffer.module.js';
import { BufferProcessor } from './buffer/buffer.processor.js';
import { ReplySender } from './reply-sender.js';
import { TurnRunner } from './turn-runner.js';
import { TurnSweeper } from './turn-sweeper.js';
import { TurnProcessor } from './turn.processor.js';
import { TurnsModule } from './turns.module.js';

/** The conversation engine: runs each contact's turns with the agent (APP_ROLE all or worker). */
@Module({
  imports: [
    registerQueue(BUFFER_QUEUE),
    BufferModule,
    AgentModule,
    CampaignsModule,
    ContactsModule,
    MediaLinksModule,
    InstancesModule,
    MessagesModule,
    SendModule,
    TurnsModule,
  ],
  providers: [ReplySender, TurnRunner, TurnSweeper, BufferProcessor, TurnProcessor],
})
export class TurnsWorkerModule {}
