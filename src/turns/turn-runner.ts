import { Injectable, Logger } from '@nestjs/common';
import { backoffDelay, type Backoff } from '../common/backoff.js';
import type { BufferFlushJob } from '../queue/queues.js';
import { AppConfig } from '../config/app-config.js';
import { ContactStore } from '../contacts/contact.store.js';
import type { ContactKeys } from '../contacts/contact.types.js';
import type { Instance } from '../instances/instance.types.js';
import { InstancesService } from '../instances/instances.service.js';
import { MessageStore } from '../messages/message.store.js';
import type { AwaitingSpan } from '../messages/message.types.js';
import { recipientOfContact, type Recipient } from '../messages/messages.service.js';
import { MetricsService } from '../metrics/metrics.service.js';
import type { InboundMessage } from '../platform/webhook-payload.js';
import { TurnScheduler } from './turn-scheduler.js';
import type { FinalTurnState, NewTurnPart, QueuedTurnPart, TurnRow } from './turn-states.js';
import { TurnStore } from './turn.store.js';
import { AgentClient, type AgentAttempt } from '../agent/agent-client.js';
import { AgentSlots, type AgentSlot } from '../agent/agent-slots.js';
import {
  buildAgentRequest,
  contactState,
  HANDOFF_HISTORY,
  contextMessage,
  unknownContactState,
  type AgentAnswering,
  type AgentContactState,
  type AgentContextMessage,
} from '../agent/agent-payload.js';
import { CampaignStore } from '../campaigns/campaign.store.js';
import { MediaLinks } from '../media/media-links.js';
import { ContactBuffer } from './buffer/contact-buffer.js';
import { ReplySender, recordingSent } from './reply-sender.js';
import { newLeaseOwner } from '../common/lease-owner.js';
import { TurnLease } from './turn-lease.js';

/** Waits between agent attempts that may succeed later (timeouts, 5xx, 408, 429). */
export const AGENT_BACKOFF: Backoff = { baseDelayMs: 1000, maxDelayMs: 10_000 };

/** Where a run of a turn left it. */
export type TurnStep =
  | 'empty' // nothing waited for the agent
  | 'not_due' // messages came since the flush was armed: it is armed again for later
  | 'busy' // another worker holds the turn, or a retry is not due yet
  | 'lost' // the lease was taken over mid-run
  | 'waiting' // a retry is scheduled
  | FinalTurnState;

/** What a run works on: the turn's row, or as much of it as a fresh claim knows. */
type ActiveTurn = Pick<
  TurnRow,
  'id' | 'instance_id' | 'contact_id' | 'status' | 'attempts' | 'agent_deadline' | 'reply_deadline'
>;

/** What a fresh claim brought along, so the run does not read it again. */
interface Loaded {
  messages: InboundMessage[];
  contact: ContactKeys;
}

/**
 * Advances turns (see turn-states.ts): takes a contact's waiting messages
 * into a turn, calls the agent (typing indicator on the first attempt),
 * stores its answer and has the reply parts sent. Each run holds the turn's
 * lease and goes as far as it can; a failure that may pass is waited out by
 * a delayed wake-up, never by a sleep. A fresh turn takes three statements:
 * the claim, the answer, the end.
 */
@Injectable()
export class TurnRunner {
  private readonly logger = new Logger(TurnRunner.name);

  constructor(
    private readonly config: AppConfig,
    private readonly buffer: ContactBuffer,
    private readonly turns: TurnStore,
    private readonly scheduler: TurnScheduler,
    private readonly instances: InstancesService,
    private readonly messages: MessageStore,
    private readonly contacts: ContactStore,
    private readonly campaigns: CampaignStore,
    private readonly mediaLinks: MediaLinks,
    private readonly agent: AgentClient,
    private readonly slots: AgentSlots,
    private readonly replies: ReplySender,
    private readonly metrics: MetricsService,
  ) {}

  private get leaseMs(): number {
    return this.config.TURN_LEASE_S * 1000;
  }

  /**
   * The contact's flush ran: if the buffer is due, its waiting messages
   * become a turn, which runs now; if messages came since, the flush is armed
   * again for later. While the contact has an open turn they wait for the
   * next one; that open turn is nudged in case its worker died.
   */
  async startTurn(flush: BufferFlushJob): Promise<TurnStep> {
    const { instanceId, contactId } = flush;
    const owner = newLeaseOwner();
    const claim = await this.buffer.claim(flush, owner);
    if (claim.kind === 'empty' || claim.kind === 'not_due') return claim.kind;
    if (claim.kind === 'busy') return this.run(claim.turnId);
    const turn: ActiveTurn = {
      id: claim.turnId,
      instance_id: instanceId,
      contact_id: contactId,
      status: 'calling',
      attempts: 1,
      agent_deadline: new Date(Date.now() + this.config.AGENT_RETRY_MAX_S * 1000),
      reply_deadline: null,
    };
    return this.hold(turn, owner, { messages: claim.messages, contact: claim.contact });
  }

  /** Advances one turn as far as it goes, if its lease is free. */
  async run(turnId: string, owner = newLeaseOwner()): Promise<TurnStep> {
    const turn = await this.turns.acquire(turnId, owner, this.leaseMs);
    if (!turn) return 'busy';
    return this.hold(turn, owner);
  }

  /** Runs the turn under its lease, renewed meanwhile; an error lets the lease go at once. */
  private async hold(turn: ActiveTurn, owner: string, loaded?: Loaded): Promise<TurnStep> {
    const lease = new TurnLease(turn.id, owner, this.turns, this.leaseMs);
    try {
      return await this.advance(turn, lease, loaded);
    } catch (error) {
      // Let another run (this job's retry, or the sweeper's) resume at once.
      await this.turns.release(turn.id, owner).catch(() => undefined);
      throw error;
    } finally {
      lease.stop();
    }
  }

  private async advance(turn: ActiveTurn, lease: TurnLease, loaded?: Loaded): Promise<TurnStep> {
    const instance = await this.instances.findById(turn.instance_id);
    if (!instance?.is_active || !this.instances.agentEnabled(instance)) {
      const reason = !instance?.is_active ? 'the instance is deactivated' : 'the agent is off';
      return this.end(turn, lease, 'skipped', reason);
    }
    // Read each run: a number or user id may have changed since the turn began.
    const contact = loaded?.contact ?? (await this.contacts.contactKeys(turn.contact_id));
    const recipient = contact && recipientOfContact(contact);
    if (!contact || !recipient) return this.end(turn, lease, 'skipped', 'the contact is gone');

    let parts: QueuedTurnPart[];
    let deadline: Date | null;
    if (turn.status === 'claimed' || turn.status === 'calling') {
      const called = await this.callAgent(turn, instance, contact, recipient, lease, loaded);
      if (typeof called === 'string') return called;
      parts = called;
      deadline = new Date(Date.now() + this.config.REPLY_RETRY_MAX_S * 1000);
    } else {
      parts = await this.turns.queuedParts(turn.id);
      deadline = await this.turns.startSending(
        turn.id,
        lease.owner,
        this.config.REPLY_RETRY_MAX_S * 1000,
      );
      if (!deadline) return 'lost';
    }
    const sent = await this.replies.sendQueued(turn, instance, parts, deadline, lease);
    if (sent.kind === 'lost') return 'lost';
    if (sent.kind === 'handed_over') {
      return this.end(turn, lease, 'skipped', sent.reason, sent.lastSent);
    }
    if (sent.kind === 'wait') return this.waitForRetry(turn, lease, sent.delayMs, sent.error);
    // A resumed turn may have failed parts from before: they count too.
    const failure = sent.failure ?? (loaded ? null : await this.turns.firstPartFailure(turn.id));
    return this.end(turn, lease, failure ? 'failed' : 'done', failure, sent.lastSent);
  }

  /** The conversation before the burst and where the contact stands, for the agent. */
  private async around(
    turn: ActiveTurn,
    keys: ContactKeys,
  ): Promise<{ context: AgentContextMessage[]; contactState: AgentContactState }> {
    const [context, [contact], handoffs] = await Promise.all([
      this.messages.contextBefore(turn.contact_id, turn.id, this.config.AGENT_CONTEXT_MESSAGES),
      this.contacts.contactsByIds([turn.contact_id]),
      this.contacts.handoffHistory(turn.contact_id, HANDOFF_HISTORY),
    ]);
    return {
      context: context.map((message) =>
        contextMessage(message, (mediaId) => this.mediaLinks.url(turn.instance_id, mediaId)),
      ),
      contactState: contact ? contactState(contact, handoffs) : unknownContactState(keys),
    };
  }

  /** The template (and campaign) the customer is answering, for the agent. */
  private async answering(
    turn: ActiveTurn,
    messages: InboundMessage[],
  ): Promise<AgentAnswering | null> {
    const quoted = messages.flatMap((message) =>
      typeof message.context?.id === 'string' ? [message.context.id] : [],
    );
    const template = await this.messages.templateBefore(turn.contact_id, turn.id, quoted);
    if (!template) return null;
    const campaign = await this.campaigns.sentWith(template.wamid);
    return {
      message_id: template.wamid,
      template: { name: template.template_name, language: template.language },
      campaign: campaign ? { id: campaign.id, name: campaign.name } : null,
      sent_at: template.sent_at.toISOString(),
    };
  }

  /** One agent attempt; the parts to send when it answered with some. */
  private async callAgent(
    turn: ActiveTurn,
    instance: Instance,
    contact: ContactKeys,
    recipient: Recipient,
    lease: TurnLease,
    loaded?: Loaded,
  ): Promise<TurnStep | QueuedTurnPart[]> {
    const messages = loaded?.messages ?? (await this.messages.ofTurn(turn.id));
    if (messages.length === 0) return this.end(turn, lease, 'skipped', 'its messages are gone');
    const request = buildAgentRequest(
      turn.id,
      instance,
      contact,
      messages,
      await this.answering(turn, messages),
      await this.around(turn, contact),
      (mediaId) => this.mediaLinks.url(turn.instance_id, mediaId),
    );
    const settings = this.instances.agentSettings(instance);
    // One of the instance's few call slots, or the turn waits without holding a worker.
    const slot = await this.slots.take(turn.instance_id, turn.id);
    if (!slot) return this.waitForSlot(turn, lease, loaded !== undefined);
    let started: ActiveTurn | null;
    let attempt: AgentAttempt;
    try {
      // A fresh claim counted its first call already.
      started = loaded
        ? turn
        : await this.turns.startAgentAttempt(
            turn.id,
            lease.owner,
            this.config.AGENT_RETRY_MAX_S * 1000,
          );
      if (!started) return 'lost';
      if (started.attempts === 1 && settings.typing) {
        void this.showTyping(instance, messages.at(-1)!.id);
      }
      const stopTimer = this.metrics.agentDuration.startTimer();
      attempt = await this.agent.attempt(request, settings);
      stopTimer();
    } finally {
      await this.releaseSlot(slot);
    }
    // Another worker took over while the agent worked: it calls again, with the same batch_id.
    if (!lease.held) return 'lost';

    if (attempt.ok) {
      this.metrics.agentAttempts.inc({ outcome: 'ok' });
      if (attempt.handoff) {
        // The agent asks for a person: it pauses for the contact, its reply (if any) still goes.
        await this.contacts.startHandoff(
          turn.contact_id,
          new Date(Date.now() + this.config.HANDOFF_DEFAULT_S * 1000),
          attempt.handoff.reason ?? 'the agent asked for a person',
          'agent',
        );
      }
      const parts = await this.replies.partsOf(attempt.answer, recipient);
      const stored = await this.turns.storeAnswer(
        turn.id,
        lease.owner,
        attempt.raw,
        parts,
        this.config.REPLY_RETRY_MAX_S * 1000,
      );
      if (!stored.stored) return 'lost';
      if (stored.ended) {
        await this.ended(turn, 'done', null, stored.awaiting);
        return 'done';
      }
      return queuedParts(turn.id, parts);
    }
    const log = { turnId: turn.id, instanceId: turn.instance_id, attempt: started.attempts };
    if (attempt.retryable) {
      const delayMs = Math.max(
        backoffDelay(started.attempts, AGENT_BACKOFF),
        attempt.retryAfterMs ?? 0,
      );
      if (Date.now() + delayMs <= (started.agent_deadline?.getTime() ?? 0)) {
        this.metrics.agentAttempts.inc({ outcome: 'retry' });
        this.logger.warn(
          { ...log, delayMs, reason: attempt.reason },
          'agent call failed: will retry',
        );
        return this.waitForRetry(turn, lease, delayMs, attempt.reason);
      }
    }
    this.metrics.agentAttempts.inc({ outcome: 'failed' });
    const reason = attempt.retryable
      ? `${attempt.reason} (gave up after ${started.attempts} attempts)`
      : attempt.reason;
    return this.end(turn, lease, 'failed', reason);
  }

  /** The instance's agent calls are all in use: the turn waits in line, due when one ends. */
  private async waitForSlot(
    turn: ActiveTurn,
    lease: TurnLease,
    counted: boolean,
  ): Promise<TurnStep> {
    const note =
      `waiting for one of the instance's ${this.config.AGENT_MAX_CONCURRENCY_PER_INSTANCE} ` +
      'agent calls (AGENT_MAX_CONCURRENCY_PER_INSTANCE) to end';
    if (!(await this.turns.waitForSlot(turn.id, lease.owner, counted, note))) return 'lost';
    // In line only once the wait is recorded, so the wake-up a released slot sends finds it due.
    if (await this.slots.waitInLine(turn.instance_id, turn.id)) await this.wake(turn.id);
    return 'waiting';
  }

  /** Frees a call slot and wakes the turn that waited longest for one. */
  private async releaseSlot(slot: AgentSlot): Promise<void> {
    const next = await slot.release();
    if (next) await this.wake(next);
  }

  private async wake(turnId: string): Promise<void> {
    try {
      await this.scheduler.wake(turnId);
    } catch (wakeError) {
      // Redis away: the sweeper finds the turn in PostgreSQL once its time has come.
      this.logger.warn({ turnId, err: (wakeError as Error).message }, 'turn not woken');
    }
  }

  private async waitForRetry(
    turn: ActiveTurn,
    lease: TurnLease,
    delayMs: number,
    error: string,
  ): Promise<TurnStep> {
    if (!(await this.turns.waitForRetry(turn.id, lease.owner, delayMs, error))) return 'lost';
    try {
      await this.scheduler.wake(turn.id, delayMs);
    } catch (wakeError) {
      // Redis away: the sweeper finds the turn in PostgreSQL once its time has come.
      this.logger.warn(
        { turnId: turn.id, err: (wakeError as Error).message },
        'retry not scheduled',
      );
    }
    return 'waiting';
  }

  /** Ends the turn, recording its last sent part in the same statement. */
  private async end(
    turn: ActiveTurn,
    lease: TurnLease,
    status: FinalTurnState,
    error: string | null,
    lastSent?: { position: number; wamid: string },
  ): Promise<TurnStep> {
    const finish = () => this.turns.finish(turn.id, lease.owner, status, error, lastSent);
    const result = lastSent
      ? await recordingSent(this.logger, { turnId: turn.id, ...lastSent }, finish)
      : await finish();
    if (!result.ended) return 'lost';
    await this.ended(turn, status, error, result.awaiting);
    return status;
  }

  /** Counts and logs a turn's end, and lets the contact's next messages have their turn. */
  private async ended(
    turn: ActiveTurn,
    status: FinalTurnState,
    error: string | null,
    awaiting: AwaitingSpan | null,
  ): Promise<void> {
    this.metrics.turnsFinished.inc({ status });
    const log = { turnId: turn.id, instanceId: turn.instance_id, reason: error ?? undefined };
    if (status === 'failed') this.logger.error(log, 'turn failed: see GET /admin/turns');
    else if (status === 'skipped') this.logger.warn(log, 'turn skipped');
    if (!awaiting) return;
    try {
      await this.buffer.scheduleFrom(turn.instance_id, turn.contact_id, awaiting);
    } catch (scheduleError) {
      // Redis away: the sweeper finds the waiting messages in PostgreSQL.
      this.logger.warn(
        { ...log, err: (scheduleError as Error).message },
        'next flush not scheduled',
      );
    }
  }

  private async showTyping(instance: Instance, wamid: string): Promise<void> {
    try {
      await this.instances.session(instance).markReadWithTyping(wamid);
    } catch {
      // Best effort: the answer matters, the indicator does not.
    }
  }
}

/** The parts of a fresh answer still to send, as the store holds them. */
function queuedParts(turnId: string, parts: NewTurnPart[]): QueuedTurnPart[] {
  return parts.flatMap((part, position) =>
    part.status === 'queued'
      ? [
          {
            ...part,
            turn_id: turnId,
            position,
            wamid: null,
            error: null,
            attempts: 0,
            updated_at: new Date(),
          },
        ]
      : [],
  );
}
