import { Module } from '@nestjs/common';
import { TemplatesModule } from '../templates/templates.module.js';
import { CampaignStore } from './campaign.store.js';
import { CampaignsService } from './campaigns.service.js';

/** Campaigns without routes or workers: their store and the service that creates and moves them. */
@Module({
  imports: [TemplatesModule],
  providers: [CampaignStore, CampaignsService],
  exports: [CampaignStore, CampaignsService],
})
export class CampaignsModule {}
