import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Instance } from './entities/instance.entity.js';
import { InstancesService } from './instances.service.js';

/** Instances without HTTP routes: shared by the API and the workers. */
@Module({
  imports: [TypeOrmModule.forFeature([Instance])],
  providers: [InstancesService],
  exports: [InstancesService],
})
export class InstanceStoreModule {}
