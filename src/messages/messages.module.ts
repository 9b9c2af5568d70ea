import { Module } from '@nestjs/common';
import { ContactSummaries } from '../contacts/contact-summaries.js';
import { ContactsModule } from '../contacts/contacts.module.js';
import { MessageStore } from './message.store.js';
import { MessagesService } from './messages.service.js';

/** Messages without HTTP routes: shared by the API and the workers. */
@Module({
  imports: [ContactsModule],
  providers: [
    MessageStore,
    MessagesService,
    { provide: ContactSummaries, useExisting: MessageStore },
  ],
  exports: [MessageStore, MessagesService, ContactSummaries],
})
export class MessagesModule {}
