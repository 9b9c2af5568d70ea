import { Module } from '@nestjs/common';
import { ContactsModule } from '../contacts/contacts.module.js';
import { InstancesModule } from '../instances/instances.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { SendModule } from '../send/send.module.js';
import { TemplatesModule } from '../templates/templates.module.js';
import { CampaignRunner } from './campaign-runner.js';
import { CampaignsModule } from './campaigns.module.js';

/** Sends the running campaigns (APP_ROLE all or worker). */
@Module({
  imports: [
    CampaignsModule,
    TemplatesModule,
    InstancesModule,
    MessagesModule,
    ContactsModule,
    SendModule,
  ],
  providers: [CampaignRunner],
})
export class CampaignsWorkerModule {}
