import { Module } from '@nestjs/common';
import { InstanceStoreModule } from './instance-store.module.js';
import { InstancesController } from './instances.controller.js';
import { PhoneNumbersController } from './phone-numbers.controller.js';

@Module({
  imports: [InstanceStoreModule],
  controllers: [InstancesController, PhoneNumbersController],
  exports: [InstanceStoreModule],
})
export class InstancesModule {}
