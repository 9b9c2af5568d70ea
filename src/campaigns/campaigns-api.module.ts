import { Module } from '@nestjs/common';
import { CampaignsController } from './campaigns.controller.js';
import { CampaignsModule } from './campaigns.module.js';

/** The campaigns' routes (APP_ROLE all or api). */
@Module({ imports: [CampaignsModule], controllers: [CampaignsController] })
export class CampaignsApiModule {}
