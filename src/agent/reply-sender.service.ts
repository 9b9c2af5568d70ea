import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger } from '@nestjs/common';
import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { validate } from 'class-validator';
import { AppException } from '../common/app.exception.js';
import { backoffDelay, type Backoff } from '../common/backoff.js';
import { AppConfig } from '../config/app-config.js';
import type { Instance } from '../instances/entities/instance.entity.js';
import type { Recipient } from '../messages/messages.service.js';
import { MetricsService } from '../metrics/metrics.service.js';
import {
  SEND_KINDS,
  type SendKind,
  type SendRequests,
} from '../platform/outbound-message.builder.js';
import { PlatformError, sendRetryDisposition } from '../platform/platform.errors.js';
import { SEND_DTO_CLASSES } from '../send/send-dto-classes.js';
import { SendService } from '../send/send.service.js';
import type { NewTurnPart, TurnPartRow, TurnRow } from '../turns/turn-states.js';
import { TurnStore } from '../turns/turn.store.js';
import type { AgentAnswer } from './agent-client.service.js';
import { splitReply } from './reply-splitter.js';
import type { TurnLease } from './turn-lease.js';

/** Waits between attempts of a part the platform could not take yet. */
export const REPLY_BACKOFF: Backoff = { baseDelayMs: 1000, maxDelayMs: 10_000 };

/** How sending a turn's queued parts ended. */
export type SendStep =
  /** Every queued part was settled: sent, failed, uncertain. */
  | { kind: 'complete' }
  /** A part must wait before its next attempt. */
  | { kind: 'wait'; delayMs: number; error: string }
  /** Another worker took the turn over. */
  | { kind: 'lost' };

/** Tries to record a sent part this many times before giving up (the database blinking). */
const RECORD_ATTEMPTS = 5;

/**
 * The agent's answer as reply parts, and their sending: each part goes out
 * through the same path as POST /send/{kind} (window, pacing, message store),
 * in order, exactly once when the platform accepts it.
 */
@Injectable()
export class ReplySender {
  private readonly logger = new Logger(ReplySender.name);

  constructor(
    private readonly turns: TurnStore,
    private readonly sender: SendService,
    private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {}

  /**
   * The parts an answer becomes: a text split at the platform's limit, or each
   * /send body validated like its route (an invalid one is kept as `skipped`,
   * with the reason, and the others still go out).
   */
  async partsOf(answer: AgentAnswer, recipient: Recipient): Promise<NewTurnPart[]> {
    if (answer.kind === 'none') return [];
    if (answer.kind === 'reply') {
      return splitReply(answer.text).map((body) => ({
        kind: 'text',
        body: { body },
        status: 'queued',
      }));
    }
    const parts: NewTurnPart[] = [];
    for (const reply of answer.replies) {
      parts.push(await this.partOf(reply, recipient));
    }
    const skipped = parts.filter((part) => part.status === 'skipped').length;
    if (skipped > 0) this.metrics.replyParts.inc({ outcome: 'skipped' }, skipped);
    return parts;
  }

  private async partOf(reply: unknown, recipient: Recipient): Promise<NewTurnPart> {
    // The recipient is always the contact: a reply's own to, recipient or instance_id is ignored.
    const {
      send,
      to: _to,
      recipient: _recipient,
      instance_id: _instance,
      ...body
    } = (reply !== null && typeof reply === 'object' ? reply : {}) as Record<string, unknown>;
    if (typeof send !== 'string' || !SEND_KINDS.includes(send as SendKind)) {
      return {
        kind: typeof send === 'string' ? send.slice(0, 16) : 'unknown',
        body,
        status: 'skipped',
        error: `unknown send type ${JSON.stringify(send)}`,
      };
    }
    const kind = send as SendKind;
    const dto = plainToInstance(
      SEND_DTO_CLASSES[kind] as ClassConstructor<SendRequests[SendKind]>,
      { ...body, ...recipient },
    );
    const errors = await validate(dto, { whitelist: true, forbidNonWhitelisted: true });
    if (errors.length > 0) {
      return {
        kind,
        body,
        status: 'skipped',
        error: `invalid: ${errors.map((error) => error.property).join(', ')}`,
      };
    }
    const {
      to: _number,
      recipient: _userId,
      ...validated
    } = JSON.parse(JSON.stringify(dto)) as Record<string, unknown>;
    return { kind, body: validated, status: 'queued' };
  }

  /**
   * Sends the turn's queued parts in order. A part the platform cannot take
   * yet (away, throttling) makes the turn wait, within REPLY_RETRY_MAX_S of
   * its first send; a refused one fails; one that may have gone out without
   * an answer is `uncertain` and never repeated. The others still go.
   */
  async sendQueued(
    turn: TurnRow,
    instance: Instance,
    recipient: Recipient,
    lease: TurnLease,
  ): Promise<SendStep> {
    const parts = await this.turns.queuedParts(turn.id);
    if (parts.length === 0) return { kind: 'complete' };
    const deadline = await this.turns.startSending(
      turn.id,
      lease.owner,
      this.config.REPLY_RETRY_MAX_S * 1000,
    );
    if (!deadline) return { kind: 'lost' };
    for (const part of parts) {
      if (!lease.held) return { kind: 'lost' };
      const kind = part.kind as SendKind;
      const request = plainToInstance(
        SEND_DTO_CLASSES[kind] as ClassConstructor<SendRequests[SendKind]>,
        { ...part.body, ...recipient },
      );
      let wamid: string;
      try {
        wamid = await this.sender.send(instance, kind, request);
      } catch (error) {
        const wait = await this.settleFailure(turn, part, error, deadline);
        if (wait) return wait;
        continue;
      }
      await this.recordSent(turn.id, part.position, wamid);
      this.metrics.replyParts.inc({ outcome: 'sent' });
    }
    return { kind: 'complete' };
  }

  /** Settles a failed part, or says how long to wait before trying it again. */
  private async settleFailure(
    turn: TurnRow,
    part: TurnPartRow,
    error: unknown,
    deadline: Date,
  ): Promise<SendStep | null> {
    // Anything but the platform's or our own refusal (the database, Redis) fails the job: BullMQ retries.
    if (!(error instanceof AppException)) throw error;
    const disposition =
      error instanceof PlatformError ? sendRetryDisposition(error.failure) : { kind: 'final' };
    const log = { turnId: turn.id, position: part.position, code: error.code };
    if (disposition.kind === 'retry') {
      const attempt = part.attempts + 1;
      const delayMs = Math.max(
        backoffDelay(attempt, REPLY_BACKOFF),
        'retryAfterMs' in disposition ? (disposition.retryAfterMs ?? 0) : 0,
      );
      if (Date.now() + delayMs <= deadline.getTime()) {
        await this.turns.countPartAttempt(turn.id, part.position, error.message);
        this.metrics.replyParts.inc({ outcome: 'retry' });
        this.logger.warn({ ...log, attempt, delayMs }, 'reply part not sent yet: will retry');
        return { kind: 'wait', delayMs, error: `reply part ${part.position}: ${error.message}` };
      }
      await this.turns.settlePart(turn.id, part.position, 'failed', {
        error: `${error.message} (gave up after ${attempt} attempts)`,
      });
    } else if (disposition.kind === 'uncertain') {
      await this.turns.settlePart(turn.id, part.position, 'uncertain', { error: error.message });
    } else {
      await this.turns.settlePart(turn.id, part.position, 'failed', { error: error.message });
    }
    const outcome = disposition.kind === 'uncertain' ? 'uncertain' : 'failed';
    this.metrics.replyParts.inc({ outcome });
    this.logger.error({ ...log, reason: error.message }, `reply part ${outcome}`);
    return null;
  }

  /** The platform took the part: record it, through a short database blip if need be. */
  private async recordSent(turnId: string, position: number, wamid: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.turns.settlePart(turnId, position, 'sent', { wamid });
        return;
      } catch (error) {
        if (attempt >= RECORD_ATTEMPTS) {
          // Left queued, it would be sent again on resume: say so loudly.
          this.logger.error(
            { turnId, position, wamid, err: (error as Error).message },
            'a sent reply part could not be recorded; it may be sent again',
          );
          throw error;
        }
        await sleep(250 * 2 ** attempt);
      }
    }
  }
}
