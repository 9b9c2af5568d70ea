import { randomUUID } from 'node:crypto';
import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { BUFFER_FLUSH_JOB, BUFFER_QUEUE, type BufferFlushJob } from '../common/queues.js';
import { AppConfig } from '../config/app-config.js';
import { MessagesService } from '../messages/messages.service.js';
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

  /**
   * (Re)arms the contact's flush for MESSAGE_BUFFER_DELAY after its last
   * waiting message, but no later than MESSAGE_BUFFER_MAX_WAIT after the
   * first. BullMQ's debounce replaces the delayed job and keeps at most one
   * more while one runs. Nothing happens when no message waits.
   */
  async schedule(instanceId: string, contactId: string): Promise<void> {
    if (!this.enabled) return;
    const span = await this.messages.awaitingSpan(instanceId, contactId);
    if (!span) return;
    const due = Math.min(
      span.last.getTime() + this.config.MESSAGE_BUFFER_DELAY * 1000,
      span.first.getTime() + this.config.MESSAGE_BUFFER_MAX_WAIT * 1000,
    );
    const delay = Math.max(0, Math.round(due - Date.now()));
    await this.queue.add(
      BUFFER_FLUSH_JOB,
      { instanceId, contactId },
      {
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
    );
  }

  /** Takes the contact's waiting messages into a new turn held by `owner`, unless one is open. */
  claim(instanceId: string, contactId: string, owner: string): Promise<ClaimResult> {
    return this.turns.claim(
      randomUUID(),
      instanceId,
      contactId,
      owner,
      this.config.TURN_LEASE_S * 1000,
    );
  }
}
