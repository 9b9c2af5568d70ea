import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Contact } from './entities/contact.entity.js';
import { Message } from './entities/message.entity.js';
import { MessagesService } from './messages.service.js';

/** The message store without HTTP routes: shared by the API and the workers. */
@Module({
  imports: [TypeOrmModule.forFeature([Message, Contact])],
  providers: [MessagesService],
  exports: [MessagesService],
})
export class MessageStoreModule {}
