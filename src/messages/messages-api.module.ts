import { Module } from '@nestjs/common';
import { MessageStoreModule } from './message-store.module.js';
import { MessagesController } from './messages.controller.js';

@Module({
  imports: [MessageStoreModule],
  controllers: [MessagesController],
})
export class MessagesModule {}
