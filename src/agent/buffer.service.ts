import { randomUUID } from 'node:crypto';
import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bullmq';
import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { validate } from 'class-validator';
import { DataSource } from 'typeorm';
import { BUFFER_FLUSH_JOB, BUFFER_QUEUE, type BufferFlushJob } from '../common/queues.js';
import { AppConfig } from '../config/app-config.js';
import type { Instance } from '../instances/entities/instance.entity.js';
import { InstancesService } from '../instances/instances.service.js';
import { MetricsService, QUEUE_STATES } from '../metrics/metrics.service.js';
import {
  SEND_KINDS,
  type SendKind,
  type SendRequests,
} from '../platform/outbound-message.builder.js';
import { PlatformClient } from '../platform/platform-client.service.js';
import { SEND_DTO_CLASSES } from '../send/send-dto-classes.js';
import { SendService } from '../send/send.service.js';
import type { InboundMessage } from '../webhook/webhook-payload.js';
import { AgentClient, AgentCallError } from './agent-client.service.js';
import { buildAgentRequest } from './agent-payload.js';
import { splitReply } from './reply-splitter.js';

export type BatchOutcome = 'empty' | 'done' | 'failed' | 'skipped';

/**
 * A contact's burst of messages: they stay in PostgreSQL (not in job data,
 * which a debounced job replaces) until one delayed job per contact claims
 * them all as a batch and hands it to the agent.
 */
@Injectable()
export class BufferService {
  private readonly logger = new Logger(BufferService.name);

  constructor(
    @InjectQueue(BUFFER_QUEUE) private readonly queue: Queue<BufferFlushJob>,
    @InjectDataSource() private readonly db: DataSource,
    private readonly config: AppConfig,
    private readonly instances: InstancesService,
    private readonly agent: AgentClient,
    private readonly sender: SendService,
    private readonly platform: PlatformClient,
    private readonly metrics: MetricsService,
  ) {
    metrics.addQueueReader(async () => [
      { queue: BUFFER_QUEUE, counts: await this.queue.getJobCounts(...QUEUE_STATES) },
    ]);
  }

  /**
   * (Re)arms the contact's flush: MESSAGE_BUFFER_DELAY after this message, but
   * no later than MESSAGE_BUFFER_MAX_WAIT after the oldest one waiting.
   * BullMQ's debounce replaces the delayed job, and keeps at most one more
   * while one runs, so a contact's batches never run side by side.
   */
  async schedule(instanceId: string, contact: string): Promise<void> {
    if (!this.agent.enabled) return;
    const [oldest] = await this.db.query<Array<{ first: Date | null }>>(
      `SELECT min(created_at) AS first FROM messages
       WHERE instance_id = $1 AND contact = $2 AND direction = 'inbound' AND batch_id IS NULL`,
      [instanceId, contact],
    );
    const delayMs = Math.round(this.config.MESSAGE_BUFFER_DELAY * 1000);
    const capMs = oldest?.first
      ? oldest.first.getTime() + this.config.MESSAGE_BUFFER_MAX_WAIT * 1000 - Date.now()
      : delayMs;
    const delay = Math.max(0, Math.min(delayMs, capMs));
    await this.queue.add(
      BUFFER_FLUSH_JOB,
      { instanceId, contact },
      {
        delay,
        deduplication: {
          id: `${instanceId}:${contact}`,
          ttl: Math.max(1, delay),
          extend: true,
          replace: true,
          keepLastIfActive: true,
        },
        removeOnComplete: { count: 1000 },
        removeOnFail: { age: 7 * 24 * 3600 },
      },
    );
  }

  /** Claims every waiting message of the contact as one batch and runs it through the agent. */
  async flush(instanceId: string, contact: string): Promise<BatchOutcome> {
    const instance = await this.instances.findById(instanceId);
    if (!instance || !instance.is_active) return 'skipped';
    const batchId = randomUUID();
    const messages = await this.claim(batchId, instanceId, contact);
    if (messages.length === 0) return 'empty';

    const [profile] = await this.db.query<Array<{ user_id: string | null; name: string | null }>>(
      'SELECT user_id, name FROM contacts WHERE instance_id = $1 AND wa_id = $2',
      [instanceId, contact],
    );
    const request = buildAgentRequest(
      batchId,
      instance,
      { wa_id: contact, user_id: profile?.user_id ?? null, name: profile?.name ?? null },
      messages,
    );
    if (this.config.AGENT_TYPING_INDICATOR) void this.showTyping(instance, messages.at(-1)!.id);
    const stopTimer = this.metrics.agentDuration.startTimer();
    try {
      const { answer, attempts } = await this.agent.call(request);
      stopTimer();
      this.metrics.agentCalls.inc({ outcome: attempts > 1 ? 'retried' : 'ok' });
      await this.finish(batchId, 'done', attempts);
      if (answer.kind === 'reply') {
        for (const text of splitReply(answer.text)) {
          await this.sender.send(
            instance,
            'text',
            Object.assign(new SEND_DTO_CLASSES.text(), { to: contact, body: text }),
          );
        }
      } else if (answer.kind === 'replies') {
        await this.sendReplies(instance, contact, batchId, answer.replies);
      }
      return 'done';
    } catch (error) {
      if (!(error instanceof AgentCallError)) throw error;
      stopTimer();
      this.metrics.agentCalls.inc({ outcome: 'failed' });
      // Kept as failed: its messages are not given to the agent again.
      await this.finish(batchId, 'failed', 3, error.message);
      this.logger.error({ batchId, instanceId, reason: error.message }, 'agent batch failed');
      return 'failed';
    }
  }

  /** Atomically takes the contact's waiting messages (another flush sees none of them). */
  private async claim(
    batchId: string,
    instanceId: string,
    contact: string,
  ): Promise<InboundMessage[]> {
    return this.db.transaction(async (manager) => {
      await manager.query(
        `INSERT INTO batches (id, instance_id, contact, status) VALUES ($1, $2, $3, 'pending')`,
        [batchId, instanceId, contact],
      );
      // For UPDATE … RETURNING, TypeORM answers [rows, affected count].
      const [rows] = await manager.query<
        [Array<{ body: InboundMessage; created_at: Date; wamid: string }>, number]
      >(
        `UPDATE messages SET batch_id = $1, updated_at = now()
         WHERE id IN (
           SELECT id FROM messages
           WHERE instance_id = $2 AND contact = $3 AND direction = 'inbound' AND batch_id IS NULL
           FOR UPDATE SKIP LOCKED)
         RETURNING body, created_at, wamid`,
        [batchId, instanceId, contact],
      );
      // RETURNING has no order: timestamp order, then wamid for equal seconds.
      return rows
        .sort(
          (a, b) =>
            a.created_at.getTime() - b.created_at.getTime() || a.wamid.localeCompare(b.wamid),
        )
        .map((row) => row.body);
    });
  }

  private async finish(
    batchId: string,
    status: string,
    attempts: number,
    error?: string,
  ): Promise<void> {
    await this.db.query(
      `UPDATE batches SET status = $2, attempts = $3, error = $4, completed_at = now() WHERE id = $1`,
      [batchId, status, attempts, error ?? null],
    );
  }

  /** Each element is a /send body: validated like one; an invalid one is logged and skipped. */
  private async sendReplies(
    instance: Instance,
    contact: string,
    batchId: string,
    replies: unknown[],
  ): Promise<void> {
    for (const [index, reply] of replies.entries()) {
      // The recipient is always the contact: a reply's own to or instance_id is ignored.
      const body = { ...((reply ?? {}) as Record<string, unknown>) };
      const send = body.send;
      delete body.send;
      delete body.to;
      delete body.instance_id;
      if (typeof send !== 'string' || !SEND_KINDS.includes(send as SendKind)) {
        this.logger.warn({ batchId, index, send }, 'agent reply skipped: unknown send type');
        continue;
      }
      const invalid = await this.sendReply(instance, send as SendKind, { ...body, to: contact });
      if (invalid) {
        this.logger.warn({ batchId, index, fields: invalid }, 'agent reply skipped: invalid');
      }
    }
  }

  /** Validates one reply like its /send body and sends it; the failing fields when invalid. */
  private async sendReply<K extends SendKind>(
    instance: Instance,
    kind: K,
    body: Record<string, unknown>,
  ): Promise<string[] | null> {
    const dto = plainToInstance(SEND_DTO_CLASSES[kind] as ClassConstructor<SendRequests[K]>, body);
    const errors = await validate(dto, { whitelist: true, forbidNonWhitelisted: true });
    if (errors.length > 0) return errors.map((error) => error.property);
    await this.sender.send(instance, kind, dto);
    return null;
  }

  private async showTyping(instance: Instance, wamid: string): Promise<void> {
    try {
      await this.platform.markReadWithTyping(
        instance.phone_number_id,
        this.instances.accessToken(instance),
        wamid,
      );
    } catch {
      // Best effort: the answer matters, the indicator does not.
    }
  }
}
