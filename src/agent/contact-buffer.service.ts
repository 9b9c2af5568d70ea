import { randomUUID } from 'node:crypto';
import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { BUFFER_FLUSH_JOB, BUFFER_QUEUE, type BufferFlushJob } from '../common/queues.js';
import { AppConfig } from '../config/app-config.js';
import { MessagesService, type AwaitingSpan } from '../messages/messages.service.js';
import { MetricsService, QUEUE_STATES } from '../metrics/metrics.service.js';
import { TurnStore, type ClaimResult } from '../turns/turn.store.js';

/**
 * Each contact's burst of messages: they wait in PostgreSQL (flagged
 * `awaiting_turn`), and one delayed, debounced BullMQ job per contact says
 * when they go to the agent together, as one turn.
 */
@Injectable()
export class ContactBuffer {
  constructor(
    @InjectQueue(BUFFER_QUEUE) private readonly queue: Queue<BufferFlushJob>,
    private readonly config: AppConfig,
    private readonly messages: MessagesService,
    private readonly turns: TurnStore,
    metrics: MetricsService,
  ) {
    metrics.addQueueReader(async () => [
      { queue: BUFFER_QUEUE, counts: await this.queue.getJobCounts(...QUEUE_STATES) },
    ]);
  }

  /** Whether inbound messages wait for the agent at all (AGENT_MODULE_URL set). */
  get enabled(): boolean {
    return this.config.AGENT_MODULE_URL !== undefined;
  }

  /** (Re)arms one contact's flush (see scheduleAll). */
  schedule(instanceId: string, contactId: string): Promise<void> {
    return this.scheduleAll([{ instanceId, contactId }]);
  }

  /**
   * (Re)arms each contact's flush for MESSAGE_BUFFER_DELAY after its last
   * waiting message, but no later than MESSAGE_BUFFER_MAX_WAIT after the
   * first. BullMQ's debounce replaces a delayed job and keeps at most one
   * more while one runs. Contacts with nothing waiting are left alone. One
   * query and one round of Redis calls for all of them.
   */
  async scheduleAll(contacts: Array<{ instanceId: string; contactId: string }>): Promise<void> {
    if (!this.enabled || contacts.length === 0) return;
    const spans = await this.messages.awaitingSpans(contacts.map((c) => c.contactId));
    const now = Date.now();
    const jobs = contacts.flatMap(({ instanceId, contactId }) => {
      const span = spans.get(contactId);
      return span ? [this.flushJob(instanceId, contactId, span, now)] : [];
    });
    if (jobs.length > 0) await this.queue.addBulk(jobs);
  }

  /** The debounced flush job of a contact whose waiting messages span `span`. */
  private flushJob(instanceId: string, contactId: string, span: AwaitingSpan, now: number) {
    const due = Math.min(
      span.last.getTime() + this.config.MESSAGE_BUFFER_DELAY * 1000,
      span.first.getTime() + this.config.MESSAGE_BUFFER_MAX_WAIT * 1000,
    );
    const delay = Math.max(0, Math.round(due - now));
    return {
      name: BUFFER_FLUSH_JOB,
      data: { instanceId, contactId },
      opts: {
        delay,
        deduplication: {
          id: contactId,
          ttl: Math.max(1, delay),
          extend: true,
          replace: true,
          keepLastIfActive: true,
        },
        // A flush that fails (the database away) is tried again; the sweeper backs this up.
        attempts: 8,
        backoff: { type: 'exponential', delay: 1000 },
        removeOnComplete: { count: 1000 },
        removeOnFail: { age: 7 * 24 * 3600 },
      },
    };
  }

  /**
   * Takes the contact's waiting messages into a new turn held by `owner`, its
   * first agent call counted, unless the contact has an open turn.
   */
  claim(instanceId: string, contactId: string, owner: string): Promise<ClaimResult> {
    return this.turns.claim(
      randomUUID(),
      instanceId,
      contactId,
      owner,
      this.config.TURN_LEASE_S * 1000,
      this.config.AGENT_RETRY_MAX_S * 1000,
    );
  }

  /** Arms the contact's flush from a span already known (a turn just ended). */
  async scheduleFrom(instanceId: string, contactId: string, span: AwaitingSpan): Promise<void> {
    await this.queue.addBulk([this.flushJob(instanceId, contactId, span, Date.now())]);
  }
}
