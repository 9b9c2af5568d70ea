import { Module } from '@nestjs/common';
import { ContactsModule } from '../contacts/contacts.module.js';
import { MessageStore } from './message.store.js';
import { MessagesService } from './messages.service.js';

/** Messages without HTTP routes: shared by the API and the workers. */
@Module({
  imports: [ContactsModule],
  providers: [MessageStore, MessagesService],
  exports: [MessageStore, MessagesService],
})
export class MessagesModule {}
