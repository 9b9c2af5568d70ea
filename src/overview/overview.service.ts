import { Injectable } from '@nestjs/common';
import { EventStore } from '../events/event.store.js';
import { HealthService } from '../health/health.service.js';
import { InstancesService } from '../instances/instances.service.js';
import { MessageStore } from '../messages/message.store.js';
import { TurnStore } from '../turns/turn.store.js';
import type { OverviewDto } from './dto/overview.dto.js';

const HOUR_S = 3600;

@Injectable()
export class OverviewService {
  constructor(
    private readonly health: HealthService,
    private readonly instances: InstancesService,
    private readonly messages: MessageStore,
    private readonly events: EventStore,
    private readonly turns: TurnStore,
  ) {}

  async overview(): Promise<OverviewDto> {
    const [health, instances, waiting, undelivered, sent, turns] = await Promise.all([
      this.health.dependencies(),
      this.instances.list(),
      this.messages.awaitingSummary(),
      this.events.undeliveredSummary(),
      this.messages.sentWithin(HOUR_S),
      this.turns.countsByState(),
    ]);
    return {
      health,
      instances: {
        total: instances.length,
        active: instances.filter((i) => i.is_active).length,
        token_rejected: instances.filter((i) => i.token_rejected_at !== null).length,
      },
      messages_waiting: { count: waiting.count, oldest_age_s: waiting.oldestAgeSeconds },
      events_undelivered: { count: undelivered.count, oldest_age_s: undelivered.oldestAgeSeconds },
      sends_last_hour: sent,
      failed_turns: turns.find((t) => t.status === 'failed')?.count ?? 0,
    };
  }
}
