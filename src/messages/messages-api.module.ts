import { Module } from '@nestjs/common';
import { MessagesModule } from './messages.module.js';
import { MessagesController } from './messages.controller.js';

@Module({
  imports: [MessagesModule],
  controllers: [MessagesController],
})
export class MessagesApiModule {}
