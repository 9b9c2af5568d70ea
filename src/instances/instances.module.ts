import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Instance } from './entities/instance.entity.js';
import { InstancesController } from './instances.controller.js';
import { PhoneNumbersController } from './phone-numbers.controller.js';
import { InstancesService } from './instances.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([Instance])],
  controllers: [InstancesController, PhoneNumbersController],
  providers: [InstancesService],
  exports: [InstancesService],
})
export class InstancesModule {}
