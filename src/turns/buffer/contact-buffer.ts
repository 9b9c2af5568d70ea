import { randomUUID } from 'node:crypto';
import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { BUFFER_FLUSH_JOB, BUFFER_QUEUE, type BufferFlushJob } from '../../queue/queues.js';
import { AppConfig } from '../../config/app-config.js';
import type { ContactFlush } from '../../contacts/contact-flush.js';
import { MessageStore } from '../../messages/message.store.js';
import type { AwaitingSpan } from '../../messages/message.types.js';
import { MetricsService, QUEUE_STATES } from '../../metrics/metrics.service.js';
import { InstancesService } from '../../instances/instances.service.js';
import { TurnStore, type ClaimResult } from '../turn.store.js';
import { DeliveryBacklog, type BacklogHold } from '../../webhook-stream/delivery-backlog.js';
import { bufferDueAt } from './buffer-due.js';

/** A flush running this much before its buffer is due goes ahead. */
const DUE_TOLERANCE_MS = 25;

/** A buffer held by a backlog is looked at again after half the backlog before it, within these. */
const BACKLOG_RECHECK_MIN_MS = 250;
const BACKLOG_RECHECK_MAX_MS = 5000;

/** Waiting buffers re-armed at once when the workers catch up, per round of Redis calls. */
const RELEASE_CHUNK = 1000;

/** What a flush came to: a claim, or the buffer not due yet (its flush armed again). */
export type FlushResult = Exclude<ClaimResult, { kind: 'not_due' }> | { kind: 'not_due' };

/** A contact whose waiting messages span `span`: its flush is due from that span. */
export interface BufferSpan {
  instanceId: string;
  contactId: string;
  span: AwaitingSpan;
}

/**
 * Each contact's burst of messages: they wait in PostgreSQL (flagged
 * `awaiting_turn`), and one delayed, debounced BullMQ job per contact says
 * when they go to the agent together, as one turn.
 *
 * Live, a buffer is due MESSAGE_BUFFER_DELAY after its last message, and no
 * later than MESSAGE_BUFFER_MAX_WAIT after its first (the rule: buffer-due.ts).
 * The job is armed when the buffer starts (its first waiting message), not
 * re-armed for every message after: when it runs, the claim checks the buffer
 * is due and, if more messages came meanwhile, the flush is armed again for
 * the new time.
 * So a busy contact costs one job per quiet gap, not one per batch of
 * deliveries.
 *
 * While the workers are behind the webhook (see DeliveryBacklog), quiet gaps
 * cannot be seen yet: a buffer is due once everything that arrived up to
 * MESSAGE_BUFFER_MAX_WAIT after its first message has been stored, and when the
 * workers catch up every waiting buffer is looked at again (see release).
 * The agent gets the user's bursts whole, and a backlog is drained in few turns.
 */
@Injectable()
export class ContactBuffer implements ContactFlush, BacklogHold {
  constructor(
    @InjectQueue(BUFFER_QUEUE) private readonly queue: Queue<BufferFlushJob>,
    private readonly config: AppConfig,
    private readonly messages: MessageStore,
    private readonly turns: TurnStore,
    private readonly backlog: DeliveryBacklog,
    private readonly instances: InstancesService,
    metrics: MetricsService,
  ) {
    metrics.addQueueReader(async () => [
      { queue: BUFFER_QUEUE, counts: await this.queue.getJobCounts(...QUEUE_STATES) },
    ]);
  }

  private async timing(instanceId: string): Promise<{ delayMs: number; maxWaitMs: number }> {
    return this.instances.bufferTiming(await this.instances.findById(instanceId));
  }

  /** (Re)arms one contact's flush from its waiting messages (see scheduleAll). */
  schedule(instanceId: string, contactId: string): Promise<void> {
    return this.scheduleAll([{ instanceId, contactId }]);
  }

  /**
   * Arms the flush of buffers that just started (`started`, spans known) and
   * re-arms that of `contacts` from their waiting messages, read in one
   * query (after a retry, a sweep: whether a flush is armed is not known).
   * BullMQ's debounce replaces a delayed job and keeps at most one more
   * while one runs. Contacts with nothing waiting are left alone. One round
   * of Redis calls for all of them.
   */
  async scheduleAll(
    contacts: Array<{ instanceId: string; contactId: string }>,
    started: BufferSpan[] = [],
  ): Promise<void> {
    if (contacts.length + started.length === 0) return;
    const spans =
      contacts.length > 0
        ? await this.messages.awaitingSpans(contacts.map((c) => c.contactId))
        : new Map<string, AwaitingSpan>();
    const buffers = [...started];
    for (const { instanceId, contactId } of contacts) {
      const span = spans.get(contactId);
      if (span) buffers.push({ instanceId, contactId, span });
    }
    await this.arm(buffers);
  }

  /** Arms the flush of a buffer whose span is known (a turn just ended). */
  scheduleFrom(instanceId: string, contactId: string, span: AwaitingSpan): Promise<void> {
    return this.arm([{ instanceId, contactId, span }]);
  }

  /**
   * The workers caught up with the webhook: every waiting buffer is armed
   * again by the live rule (those a backlog held are mostly due at once).
   */
  async release(): Promise<void> {
    this.backlog.forget();
    for (let after: string | null = null; ;) {
      const page = await this.messages.awaitingBuffers(after, RELEASE_CHUNK);
      await this.arm(
        page.map(({ instance_id, contact_id, first, last }) => ({
          instanceId: instance_id,
          contactId: contact_id,
          span: { first, last },
        })),
      );
      if (page.length < RELEASE_CHUNK) return;
      after = page[page.length - 1].contact_id;
    }
  }

  private async arm(buffers: BufferSpan[]): Promise<void> {
    if (buffers.length === 0) return;
    const timings = new Map<string, { delayMs: number; maxWaitMs: number }>();
    for (const { instanceId } of buffers) {
      if (!timings.has(instanceId)) timings.set(instanceId, await this.timing(instanceId));
    }
    const now = Date.now();
    await this.queue.addBulk(
      buffers.map(({ instanceId, contactId, span }) => {
        const dueAt = bufferDueAt(span, false, timings.get(instanceId)!);
        return this.flushJob({ instanceId, contactId, dueAt }, dueAt, now);
      }),
    );
  }

  /** The contact's flush job, to run at `runAt` (ms since epoch), for a buffer due at `flush.dueAt`. */
  private flushJob(flush: Required<BufferFlushJob>, runAt: number, now: number) {
    const delay = Math.max(0, Math.round(runAt - now));
    return {
      name: BUFFER_FLUSH_JOB,
      data: flush,
      opts: {
        delay,
        deduplication: {
          id: flush.contactId,
          ttl: Math.max(1, delay),
          extend: true,
          replace: true,
          keepLastIfActive: true,
        },
      },
    };
  }

  /**
   * Takes the contact's waiting messages into a new turn held by `owner`, its
   * first agent call counted, if the buffer is due and the contact has no
   * open turn. A buffer not due yet (messages came since the flush was
   * armed, or the workers are behind) has its flush armed again for later.
   */
  async claim(flush: BufferFlushJob, owner: string): Promise<FlushResult> {
    const { instanceId, contactId, dueAt } = flush;
    const { readUpTo, behind } = await this.backlog.position();
    // Known not due from the job alone (its due time only ever moves later): no statement.
    if (dueAt !== undefined && readUpTo !== null && dueAt > readUpTo + DUE_TOLERANCE_MS) {
      await this.rearm(instanceId, contactId, dueAt, readUpTo);
      return { kind: 'not_due' };
    }
    const timing = await this.timing(instanceId);
    const claim = await this.turns.claim(randomUUID(), instanceId, contactId, owner, {
      leaseMs: this.config.TURN_LEASE_S * 1000,
      agentHorizonMs: this.config.AGENT_RETRY_MAX_S * 1000,
      // The flush job may run a little early (timer and clock precision): that counts as due.
      dueBy: new Date((readUpTo ?? Date.now()) + DUE_TOLERANCE_MS),
      delayMs: behind ? null : timing.delayMs,
      maxWaitMs: timing.maxWaitMs,
    });
    if (claim.kind !== 'not_due') return claim;
    await this.rearm(instanceId, contactId, bufferDueAt(claim.awaiting, behind, timing), readUpTo);
    return { kind: 'not_due' };
  }

  /**
   * Arms a flush that ran too early again: for when the buffer is due, or,
   * while deliveries wait unread, for a second look once more has been read.
   */
  private async rearm(
    instanceId: string,
    contactId: string,
    dueAt: number,
    readUpTo: number | null,
  ): Promise<void> {
    const now = Date.now();
    const runAt =
      readUpTo === null || dueAt <= readUpTo
        ? Math.max(dueAt, now + DUE_TOLERANCE_MS)
        : now +
          Math.min(
            BACKLOG_RECHECK_MAX_MS,
            Math.max(BACKLOG_RECHECK_MIN_MS, (dueAt - readUpTo) / 2),
          );
    await this.queue.addBulk([this.flushJob({ instanceId, contactId, dueAt }, runAt, now)]);
  }

  /**
   * What buffers are due as of: now, or, while the workers are behind, how
   * far they have read (then `behind`: only the max wait counts).
   */
  async dueAsOf(): Promise<{ at: number; behind: boolean }> {
    const { readUpTo, behind } = await this.backlog.position();
    return behind && readUpTo !== null
      ? { at: readUpTo, behind }
      : { at: Date.now(), behind: false };
  }
}
