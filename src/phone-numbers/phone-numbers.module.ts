import { Module } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module.js';
import { PhoneNumbersController } from './phone-numbers.controller.js';
import { PhoneNumbersService } from './phone-numbers.service.js';

/** The client routes on an instance's phone numbers (API key). */
@Module({
  imports: [InstancesModule],
  controllers: [PhoneNumbersController],
  providers: [PhoneNumbersService],
})
export class PhoneNumbersModule {}
