import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { Redis } from 'ioredis';
import { AppConfig } from '../config/app-config.js';
import { ContactStore } from '../contacts/contact.store.js';
import { InstancesService } from '../instances/instances.service.js';
import { MessageStore } from '../messages/message.store.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { REDIS_CLIENT } from '../redis/redis.constants.js';
import { TurnScheduler } from './turn-scheduler.js';
import { TurnStore } from './turn.store.js';
import { ContactBuffer } from './buffer/contact-buffer.js';
import { newLeaseOwner } from '../common/lease-owner.js';

/** Work is stranded only once it is this late: on time, the jobs themselves do it. */
const GRACE_MS = 5000;

export interface SweepResult {
  flushes: number;
  resumed: number;
}

/**
 * PostgreSQL is the source of truth and Redis only schedules: at start and
 * every SWEEP_INTERVAL_S (one process per interval) this finds what no job
 * will pick up — messages waiting past their buffer time with no open turn
 * (a Redis restart, a lost or failed flush job) and open turns whose worker
 * died or whose retry job is gone — and schedules it again.
 */
@Injectable()
export class TurnSweeper implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(TurnSweeper.name);
  private readonly owner = newLeaseOwner();
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly config: AppConfig,
    private readonly buffer: ContactBuffer,
    private readonly messages: MessageStore,
    private readonly contacts: ContactStore,
    private readonly turns: TurnStore,
    private readonly scheduler: TurnScheduler,
    private readonly instances: InstancesService,
    @Inject(REDIS_CLIENT) private readonly redis: Redis,
    metrics: MetricsService,
  ) {
    metrics.setPipelineReader(async () => ({
      turns: await this.turns.countsByState(),
      oldestWaitingMessageSeconds: await this.messages.oldestAwaitingAgeSeconds(),
    }));
  }

  private get intervalMs(): number {
    return this.config.SWEEP_INTERVAL_S * 1000;
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
    this.tick();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  private tick(): void {
    if (this.running) return;
    this.running = this.sweepIfDue()
      .catch((error: unknown) => {
        this.logger.warn({ err: (error as Error).message }, 'sweep failed; trying again later');
      })
      .finally(() => {
        this.running = undefined;
      });
  }

  private async sweepIfDue(): Promise<void> {
    if (!(await this.takeInterval())) return;
    const { flushes, resumed } = await this.sweep();
    if (flushes > 0 || resumed > 0) {
      this.logger.warn({ flushes, resumed }, 'sweeper rescheduled stranded work');
    }
  }

  /** One process sweeps per interval; without Redis nothing could be scheduled anyway. */
  private async takeInterval(): Promise<boolean> {
    try {
      const taken = await this.redis.set(
        `${this.config.REDIS_PREFIX}:turns:sweep`,
        this.owner,
        'PX',
        Math.max(100, this.intervalMs - 100),
        'NX',
      );
      return taken === 'OK';
    } catch {
      return false;
    }
  }

  async sweep(): Promise<SweepResult> {
    // Pauses whose time is up end (each a contact.handoff event); the agent answers again.
    await this.contacts.endExpiredHandoffs();
    // While the workers are behind the webhook, buffers are due as of how far they have read.
    const asOf = await this.buffer.dueAsOf();
    // Each buffer by its instance's own timing: a longer one is not stranded yet, a shorter
    // one is rescued as soon as its own time has passed.
    const own = (await this.instances.list())
      .filter((i) => i.agent_buffer_delay_s !== null || i.agent_buffer_max_wait_s !== null)
      .map((i) => ({ instanceId: i.id, ...this.instances.bufferTiming(i) }));
    const overdue = await this.turns.overdueContacts(
      this.instances.bufferTiming(null),
      own,
      !asOf.behind,
      GRACE_MS,
      new Date(asOf.at),
    );
    for (const { instance_id, contact_id } of overdue) {
      await this.buffer.schedule(instance_id, contact_id);
    }
    const stalled = await this.turns.resumable(GRACE_MS);
    for (const turnId of stalled) await this.scheduler.wake(turnId);
    return { flushes: overdue.length, resumed: stalled.length };
  }
}
