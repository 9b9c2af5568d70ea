import { Module } from '@nestjs/common';
import { SendController } from './send.controller.js';
import { SendModule } from './send.module.js';

@Module({
  imports: [SendModule],
  controllers: [SendController],
})
export class SendApiModule {}
