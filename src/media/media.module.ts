import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { InstanceStoreModule } from '../instances/instance-store.module.js';
import { MediaController } from './media.controller.js';
import { MediaService } from './media.service.js';

@Module({
  imports: [AuthModule, InstanceStoreModule],
  controllers: [MediaController],
  providers: [MediaService],
})
export class MediaModule {}
