import { Module } from '@nestjs/common';
import { MessageStore } from './message.store.js';
import { MessagesService } from './messages.service.js';

/** Messages and contacts without HTTP routes: shared by the API and the workers. */
@Module({
  providers: [MessageStore, MessagesService],
  exports: [MessageStore, MessagesService],
})
export class MessagesModule {}
