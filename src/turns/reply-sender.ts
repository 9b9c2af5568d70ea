import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger } from '@nestjs/common';
import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { validate } from 'class-validator';
import { AppException } from '../common/app.exception.js';
import { backoffDelay, type Backoff } from '../common/backoff.js';
import { ContactStore } from '../contacts/contact.store.js';
import type { Instance } from '../instances/instance.types.js';
import { recipientOfContact, type Recipient } from '../messages/messages.service.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { PlatformError, sendRetryDisposition } from '../platform/platform.errors.js';
import {
  SEND_DTO_CLASSES,
  SEND_KINDS,
  type SendKind,
  type SendRequests,
} from '../send/send-kinds.js';
import { ReplyWithheld, SendService } from '../send/send.service.js';
import type { NewTurnPart, QueuedTurnPart, TurnRow } from './turn-states.js';
import { TurnStore } from './turn.store.js';
import type { AgentAnswer } from '../agent/agent-client.js';
import { splitReply } from './reply-splitter.js';
import type { TurnLease } from './turn-lease.js';

/** Waits between attempts of a part the platform could not take yet. */
export const REPLY_BACKOFF: Backoff = { baseDelayMs: 1000, maxDelayMs: 10_000 };

/** How sending a turn's queued parts ended. */
export type SendStep =
  /**
   * Every queued part was settled (sent, failed, uncertain) — but the last
   * one sent, which the turn's end records (`lastSent`), in one statement.
   */
  | { kind: 'complete'; lastSent?: { position: number; wamid: string }; failure: string | null }
  /** A part must wait before its next attempt. */
  | { kind: 'wait'; delayMs: number; error: string }
  /** Another worker took the turn over. */
  | { kind: 'lost' }
  /** A person took the contact over (or it is gone): the parts not sent were skipped. */
  | { kind: 'handed_over'; lastSent?: { position: number; wamid: string }; reason: string };

/** Tries to record a sent part this many times before giving up (the database blinking). */
const RECORD_ATTEMPTS = 5;

/**
 * Writes the record of a part the platform took, retrying through a short
 * database blip: left queued, it would be sent again on resume.
 */
export async function recordingSent<T>(
  logger: Logger,
  part: { turnId: string; position: number; wamid: string },
  write: () => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (attempt >= RECORD_ATTEMPTS) {
        logger.error(
          { ...part, err: (error as Error).message },
          'a sent reply part could not be recorded; it may be sent again',
        );
        throw error;
      }
      await sleep(250 * 2 ** attempt);
    }
  }
}

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
    private readonly metrics: MetricsService,
    private readonly contacts: ContactStore,
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
    // The validated value itself goes on (stored as JSON, sent as is): no second pass.
    const { to: _number, recipient: _userId, instance_id: _none, ...validated } = dto;
    // `kind` chose the class, which TypeScript cannot follow through the lookup.
    return { kind, body: validated, status: 'queued' } as NewTurnPart;
  }

  /**
   * Sends the turn's queued parts in order. A part the platform cannot take
   * yet (away, throttling) makes the turn wait, within REPLY_RETRY_MAX_S of
   * its first send (`deadline`); a refused one fails; one that may have gone
   * out without an answer is `uncertain` and never repeated. The others
   * still go. The agent's own turn just wrote to the store and the contact
   * just wrote to the number, so neither is asked again before each part;
   * the contact's address and handoff are.
   */
  async sendQueued(
    turn: Pick<TurnRow, 'id'>,
    instance: Instance,
    parts: QueuedTurnPart[],
    deadline: Date,
    lease: TurnLease,
  ): Promise<SendStep> {
    let failure: string | null = null;
    let lastSent: { position: number; wamid: string } | undefined;
    for (const [index, part] of parts.entries()) {
      if (!lease.held) return { kind: 'lost' };
      const skipRest = async (error: string): Promise<SendStep> => {
        for (const skipped of parts.slice(index)) {
          await this.turns.settlePart(turn.id, skipped.position, 'skipped', { error });
        }
        this.metrics.replyParts.inc({ outcome: 'skipped' }, parts.length - index);
        return { kind: 'handed_over', lastSent, reason: error };
      };
      let target: Awaited<ReturnType<ReplySender['target']>>;
      try {
        target = await this.target(turn.id);
      } catch (error) {
        if (error instanceof ReplyWithheld) return skipRest(error.reason);
        throw error;
      }
      // Validated when the answer came: only the contact's current address is added.
      const request = { ...part.body, ...target.recipient };
      let wamid: string;
      try {
        // Read again right before each attempt: the pacer may hold the part a few seconds.
        wamid = await this.sender.send(instance, part.kind, request, {
          reply: { target: () => this.target(turn.id) },
        });
      } catch (error) {
        if (error instanceof ReplyWithheld) return skipRest(error.reason);
        const settled = await this.settleFailure(turn, part, error, deadline);
        if (settled.kind === 'wait') return settled;
        failure ??= settled.failure;
        continue;
      }
      if (lastSent) await this.recordSent(turn.id, lastSent.position, lastSent.wamid);
      lastSent = { position: part.position, wamid };
      this.metrics.replyParts.inc({ outcome: 'sent' });
    }
    return { kind: 'complete', lastSent, failure };
  }

  /**
   * The turn's contact now (a merge may have moved the turn, a number or user
   * id may have changed), or ReplyWithheld when a person (not the agent) has
   * it, it opted out, or it is gone: the agent says no more.
   */
  private async target(turnId: string): Promise<{ contactId: string; recipient: Recipient }> {
    const contact = await this.contacts.replyTarget(turnId);
    const recipient = contact && recipientOfContact(contact);
    if (contact?.paused) throw new ReplyWithheld('a person has the contact, or it opted out');
    if (!contact || !recipient) throw new ReplyWithheld('the contact is gone');
    return { contactId: contact.id, recipient };
  }

  /** Settles a failed part (its failure, if it failed), or says how long to wait before trying it again. */
  private async settleFailure(
    turn: Pick<TurnRow, 'id'>,
    part: QueuedTurnPart,
    error: unknown,
    deadline: Date,
  ): Promise<
    { kind: 'wait'; delayMs: number; error: string } | { kind: 'settled'; failure: string | null }
  > {
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
    }
    const outcome = disposition.kind === 'uncertain' ? 'uncertain' : 'failed';
    const reason =
      disposition.kind === 'retry'
        ? `${error.message} (gave up after ${part.attempts + 1} attempts)`
        : error.message;
    await this.turns.settlePart(turn.id, part.position, outcome, { error: reason });
    this.metrics.replyParts.inc({ outcome });
    this.logger.error({ ...log, reason }, `reply part ${outcome}`);
    return {
      kind: 'settled',
      failure: outcome === 'failed' ? `reply part ${part.position}: ${reason}` : null,
    };
  }

  /** The platform took the part: record it, through a short database blip if need be. */
  private recordSent(turnId: string, position: number, wamid: string): Promise<void> {
    return recordingSent(this.logger, { turnId, position, wamid }, () =>
      this.turns.settlePart(turnId, position, 'sent', { wamid }),
    );
  }
}
