import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { BatchWriter } from '../common/batch-writer.js';
import { AppConfig } from '../config/app-config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { EventSender, type SendResult } from './event-sender.js';
import { EventStore } from './event.store.js';
import { EventWake } from './event-wake.js';
import type { ClaimedDelivery, DeliveryAttempt, LaneResult } from './event.types.js';

/** Deliveries of one lane taken per lease: sent one after the other, in order. */
const PER_LANE = 20;

/** A lane's results that cannot be written are tried again after these waits. */
const FINISH_RETRY_DELAYS_MS = [100, 400, 1600, 5000];

/** Events older than EVENT_RETENTION_DAYS are deleted this often, this many per statement. */
const PRUNE_EVERY_MS = 10 * 60_000;
const PRUNE_BATCH = 5000;

/** Each retry waits its scheduled time ±20 %, so failed receivers are not hit in step. */
const JITTER = 0.2;

/**
 * Sends events in the worker processes. Lanes (one subscription and one
 * contact, template or instance) are leased from PostgreSQL, up to
 * EVENT_CONCURRENCY at once: each lane's events go one after the other, in
 * the order they happened, and a failure stops its lane until the retry, so
 * a later event never overtakes an earlier one; other lanes go on. A worker
 * that dies loses only its leases: another takes the lanes when they expire
 * (an event may then arrive twice, with the same webhook-id).
 */
@Injectable()
export class EventDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(EventDispatcher.name);
  private readonly owner = randomUUID();
  private readonly writer: BatchWriter<LaneResult>;
  private lanesInFlight = 0;
  private claiming = false;
  /**
   * Whether lanes may be due that no claim has looked for: events committed
   * here since the last claim began (a wake), the poll's tick (other
   * processes' events), a claim that took all the room it had, or a released
   * lane that still holds deliveries. A lane's end alone does not claim: at a
   * steady load most such claims found nothing, a statement each.
   */
  private mayHaveWork = true;
  private stopped = true;
  private poller?: NodeJS.Timeout;
  private pruner?: NodeJS.Timeout;
  private readonly running = new Set<Promise<void>>();
  private readonly claimBatch: number;

  constructor(
    private readonly config: AppConfig,
    private readonly store: EventStore,
    private readonly sender: EventSender,
    private readonly metrics: MetricsService,
    wake: EventWake,
  ) {
    // Woken once per event-loop turn at most, however many batches committed in it.
    let woken = false;
    wake.listen(() => {
      this.mayHaveWork = true;
      if (woken) return;
      woken = true;
      setImmediate(() => {
        woken = false;
        this.fill();
      });
    });
    this.writer = new BatchWriter((lanes) => this.finish(lanes), FINISH_RETRY_DELAYS_MS);
    this.claimBatch = Math.max(1, Math.floor(config.EVENT_CONCURRENCY / 4));
  }

  onApplicationBootstrap(): void {
    this.stopped = false;
    this.metrics.setEventReader(() => this.store.oldestPending());
    this.poller = setInterval(() => {
      this.mayHaveWork = true;
      this.fill();
    }, this.config.EVENT_POLL_MS);
    this.pruner = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.poller.unref();
    this.pruner.unref();
    this.fill();
  }

  /** Stops taking lanes and lets the ones in flight finish (their results written). */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.poller);
    clearInterval(this.pruner);
    const drained = Promise.all([...this.running]);
    await Promise.race([
      drained,
      sleep(this.config.EVENT_TIMEOUT_MS + 2000, undefined, { ref: false }),
    ]);
  }

  /** Leases due lanes while there is room and there may be some. */
  private fill(): void {
    if (this.stopped || this.claiming || !this.mayHaveWork) return;
    const room = this.config.EVENT_CONCURRENCY - this.lanesInFlight;
    // Lanes are claimed in batches (one round trip for many) unless none is in flight.
    if (room <= 0 || (this.lanesInFlight > 0 && room < this.claimBatch)) return;
    this.claiming = true;
    this.mayHaveWork = false;
    this.store
      .claim(this.owner, room, PER_LANE, this.config.EVENT_LEASE_S)
      .then(
        (claimed) => {
          const taken = lanes(claimed);
          // All the room taken: more lanes may be due.
          if (taken.length >= room) this.mayHaveWork = true;
          for (const lane of taken) this.start(lane);
          return true;
        },
        (error: unknown) => {
          this.logger.warn({ err: (error as Error).message }, 'event lanes not claimed');
          this.mayHaveWork = true; // the poll tries again
          return false;
        },
      )
      .finally(() => {
        this.claiming = false;
      })
      .then(
        (claimed) => {
          if (claimed) this.fill();
        },
        () => undefined,
      );
  }

  /**
   * Sends a lane, then records it. Its slot is free once the sends are done:
   * the lane stays leased in PostgreSQL until its result is written, so no
   * other worker (nor this one) takes it meanwhile.
   */
  private start(deliveries: ClaimedDelivery[]): void {
    this.lanesInFlight++;
    let finished: Promise<void> | undefined;
    const run = this.runLane(deliveries)
      .then((result) => {
        finished = this.writer.write(result);
      })
      .finally(() => {
        this.lanesInFlight--;
        this.fill();
      })
      .then(() => finished)
      .catch((error: unknown) =>
        this.logger.error({ err: (error as Error).message }, 'event lane not recorded'),
      )
      .finally(() => this.running.delete(run));
    this.running.add(run);
  }

  /**
   * Sends a lane's deliveries in order, until one fails (it is retried on
   * schedule, the rest wait) or the lease would run out.
   */
  private async runLane(deliveries: ClaimedDelivery[]): Promise<LaneResult> {
    const { subscription_id: subscriptionId, lane } = deliveries[0];
    const leaseEnds =
      Date.now() + this.config.EVENT_LEASE_S * 1000 - this.config.EVENT_TIMEOUT_MS - 1000;
    const attempts: DeliveryAttempt[] = [];
    let nextAttemptAt = new Date();
    for (const delivery of deliveries) {
      if (attempts.length > 0 && Date.now() > leaseEnds) break;
      const result = await this.sender.send(delivery);
      if (result.ok) {
        this.metrics.eventDeliveries.inc({ outcome: 'delivered' });
        this.metrics.eventLatency.observe(
          (Date.now() - delivery.event_created_at.getTime()) / 1000,
        );
        attempts.push(this.attempt(delivery, result, 'delivered', 0, null));
        continue;
      }
      const failures = delivery.failures + 1;
      const schedule = this.config.EVENT_RETRY_SCHEDULE_S;
      if (failures > schedule.length) {
        this.metrics.eventDeliveries.inc({ outcome: 'failed' });
        attempts.push(this.attempt(delivery, result, 'failed', failures, null));
        continue; // retries ran out: the next event of the lane may go
      }
      this.metrics.eventDeliveries.inc({ outcome: 'retry' });
      const waitS = Math.max(
        schedule[failures - 1] * (1 + JITTER * (2 * Math.random() - 1)),
        result.retryAfterS ?? 0,
      );
      nextAttemptAt = new Date(Date.now() + waitS * 1000);
      attempts.push(this.attempt(delivery, result, 'pending', failures, nextAttemptAt));
      break;
    }
    return { subscriptionId, lane, owner: this.owner, attempts, nextAttemptAt };
  }

  private attempt(
    delivery: ClaimedDelivery,
    result: SendResult,
    state: DeliveryAttempt['state'],
    failures: number,
    nextAttemptAt: Date | null,
  ): DeliveryAttempt {
    return {
      seq: delivery.seq,
      state,
      failures,
      status: result.status,
      response: result.response,
      error: result.error,
      nextAttemptAt,
    };
  }

  /**
   * Writes lanes' results, then the subscriptions' health: a success clears
   * a run of failures; a failure starts one, and a run longer than
   * EVENT_DISABLE_AFTER_S (or a 410 Gone) disables the subscription.
   */
  private async finish(results: LaneResult[]): Promise<void> {
    const healthy = new Set<string>();
    const failing = new Set<string>();
    const gone = new Set<string>();
    for (const lane of results) {
      for (const attempt of lane.attempts) {
        if (attempt.state === 'delivered') healthy.add(lane.subscriptionId);
        else failing.add(lane.subscriptionId);
        if (attempt.status === 410) gone.add(lane.subscriptionId);
      }
    }
    for (const id of healthy) failing.delete(id);
    const unfinished = await this.store.finish(results, [...healthy]);
    if (unfinished > 0) {
      this.mayHaveWork = true;
      this.fill();
    }
    if (failing.size === 0 && gone.size === 0) return;
    const disabled = await this.store.markFailing(
      [...failing],
      [...gone],
      this.config.EVENT_DISABLE_AFTER_S,
    );
    for (const { id, reason } of disabled) {
      const cause = gone.has(id) ? 'gone' : 'failing';
      this.metrics.eventSubscriptionsDisabled.inc({ reason: cause });
      this.logger.warn(
        { subscriptionId: id, reason },
        'event subscription disabled: its events wait until an admin enables it',
      );
    }
  }

  private async prune(): Promise<void> {
    try {
      let deleted: number;
      do {
        deleted = await this.store.prune(this.config.EVENT_RETENTION_DAYS, PRUNE_BATCH);
      } while (deleted === PRUNE_BATCH && !this.stopped);
    } catch (error) {
      this.logger.warn({ err: (error as Error).message }, 'old events not pruned');
    }
  }
}

/** Claimed deliveries grouped by lane, each in event order (as claimed). */
function lanes(claimed: ClaimedDelivery[]): ClaimedDelivery[][] {
  const grouped = new Map<string, ClaimedDelivery[]>();
  for (const delivery of claimed) {
    const key = `${delivery.subscription_id} ${delivery.lane}`;
    const lane = grouped.get(key);
    if (lane) lane.push(delivery);
    else grouped.set(key, [delivery]);
  }
  return [...grouped.values()];
}
