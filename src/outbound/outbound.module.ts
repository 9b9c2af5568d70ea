import { Module } from '@nestjs/common';
import { TargetGuard } from './target-guard.js';

/** The guard of every outbound target an admin configures (event subscriptions, instance agents). */
@Module({
  providers: [TargetGuard],
  exports: [TargetGuard],
})
export class OutboundModule {}
