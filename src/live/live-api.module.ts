import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { ContactsModule } from '../contacts/contacts.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { LiveFeed } from './live-feed.service.js';
import { LiveController } from './live.controller.js';
import { LiveStore } from './live.store.js';

/** The live streams (GET /live) of an api process, fed by PostgreSQL's notifications. */
@Module({
  imports: [AuthModule, ContactsModule, MessagesModule],
  controllers: [LiveController],
  providers: [LiveStore, LiveFeed],
})
export class LiveApiModule {}
