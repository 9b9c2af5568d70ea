import { Module } from '@nestjs/common';
import { SendController } from './send.controller.js';
import { SendingModule } from './sending.module.js';

@Module({
  imports: [SendingModule],
  controllers: [SendController],
})
export class SendModule {}
