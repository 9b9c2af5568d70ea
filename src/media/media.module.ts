import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { InstancesModule } from '../instances/instances.module.js';
import { MediaLinksController } from './media-links.controller.js';
import { MediaLinksModule } from './media-links.module.js';
import { MediaController } from './media.controller.js';
import { MediaService } from './media.service.js';

@Module({
  imports: [AuthModule, InstancesModule, MediaLinksModule],
  controllers: [MediaController, MediaLinksController],
  providers: [MediaService],
})
export class MediaModule {}
