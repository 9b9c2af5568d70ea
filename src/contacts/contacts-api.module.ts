import { Module } from '@nestjs/common';
import { BufferModule } from '../turns/buffer/buffer.module.js';
import { InstancesModule } from '../instances/instances.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { AdminContactsController } from './admin-contacts.controller.js';
import { ContactsController } from './contacts.controller.js';
import { ContactsService } from './contacts.service.js';

/** Conversations, handoffs and opt-outs: client and admin routes (api processes). */
@Module({
  imports: [MessagesModule, InstancesModule, BufferModule],
  controllers: [ContactsController, AdminContactsController],
  providers: [ContactsService],
})
export class ContactsApiModule {}
