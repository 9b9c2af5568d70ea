import { Module } from '@nestjs/common';
import { ContactsModule } from '../contacts/contacts.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { ConversationsController } from './conversations.controller.js';
import { ConversationsService } from './conversations.service.js';

/** A contact's conversation: the client route (api processes). */
@Module({
  imports: [ContactsModule, MessagesModule],
  controllers: [ConversationsController],
  providers: [ConversationsService],
})
export class ConversationsApiModule {}
