import { Module } from '@nestjs/common';
import { TemplatesModule } from '../templates/templates.module.js';
import { CampaignStore } from './campaign.store.js';
import { CampaignsService } from './campaigns.service.js';
import { DailyAllowance } from './daily-allowance.js';

/** Campaigns without routes or workers: their store and the service that creates and moves them. */
@Module({
  imports: [TemplatesModule],
  providers: [CampaignStore, CampaignsService, DailyAllowance],
  exports: [CampaignStore, CampaignsService, DailyAllowance],
})
export class CampaignsModule {}
