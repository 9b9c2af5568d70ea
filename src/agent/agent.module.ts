import { Module } from '@nestjs/common';
import { OutboundModule } from '../outbound/outbound.module.js';
import { AgentClient } from './agent-client.js';
import { AgentSlots } from './agent-slots.js';

/** What talks to the agent: its client and the per-instance limit on calls (worker processes). */
@Module({
  imports: [OutboundModule],
  providers: [AgentClient, AgentSlots],
  exports: [AgentClient, AgentSlots],
})
export class AgentModule {}
