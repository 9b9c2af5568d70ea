import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { InstancesModule } from '../instances/instances.module.js';
import { MediaController } from './media.controller.js';
import { MediaService } from './media.service.js';

@Module({
  imports: [AuthModule, InstancesModule],
  controllers: [MediaController],
  providers: [MediaService],
})
export class MediaModule {}
