import { Injectable, Logger } from '@nestjs/common';
import { ContactBuffer, type BufferSpan } from '../turns/buffer/contact-buffer.js';
import type { WebhookDelivery } from '../queue/queues.js';
import { sqlState } from '../database/sql.js';
import type { Instance } from '../instances/instance.types.js';
import { EventWake } from '../events/event-wake.js';
import { InstancesService } from '../instances/instances.service.js';
import { identityKey, type Identity, type IdentityRow } from '../contacts/contact-identity.js';
import { ContactStore } from '../contacts/contact.store.js';
import { OptOuts } from '../contacts/opt-outs.js';
import { MessageStore } from '../messages/message.store.js';
import { MessagesService } from '../messages/messages.service.js';
import { HistoryStore } from '../history/history.store.js';
import { AppConfig } from '../config/app-config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import type {
  InboundContact,
  InboundStatus,
  MessagesValue,
  TemplateStatusValue,
  WebhookEnvelope,
} from '../platform/webhook-payload.js';
import {
  dailyLimitOf,
  MARKETING_STOPPED_CODE,
  TEMPLATE_FIELDS,
  UPGRADED_THROUGHPUT,
} from '../platform/webhook-payload.js';
import { TemplateStore } from '../templates/template.store.js';
import type { TemplateEvent } from '../templates/template.types.js';
import type { DeliveryHandler } from '../webhook-stream/delivery-handler.js';
import {
  fallbackBody,
  fitText,
  identityRows,
  inboundMessageRow,
  messageTime,
  statusRows,
  storableJson,
  type InboundMessageRow,
} from './inbound-rows.js';

/** What a batch of deliveries came to. */
export interface DeliveryResult {
  /** Messages stored for the first time (re-sent ones are not counted again). */
  stored: number;
  duplicates: number;
  /** Messages that could not be stored at all (no usable id or sender), and unreadable deliveries. */
  invalid: number;
  statuses: number;
  templateEvents: number;
  /** Changes for numbers with no instance, or a deactivated one: acknowledged, not processed. */
  unrouted: number;
  inactive: number;
}

/** Whose flush an instance's new messages call for. */
interface Stored {
  /** Contacts with no message waiting before these: their flush is armed from this span. */
  started: BufferSpan[];
  /**
   * Contacts whose flush may never have been armed: some of their messages
   * were stored by an earlier attempt (or a re-sent delivery), which may
   * have died before arming it. Checked from what waits.
   */
  recheck: string[];
}

/** What one insert stored: new messages per contact, and the buffers they started. */
interface Inserted {
  stored: Map<string, number>;
  started: BufferSpan[];
  /** Stop and start words stored now (not re-sent ones), by wamid. */
  words: Set<string>;
}

/** Everything a batch holds for one instance. */
interface InstanceWork {
  instance: Instance;
  messages: InboundMessageRow[];
  profiles: InboundContact[];
  statuses: Array<Partial<InboundStatus> | null>;
}

/** A value PostgreSQL refused (SQLSTATE class 22, or a check): retrying the same row cannot help. */
function isDataError(error: unknown): boolean {
  const state = sqlState(error);
  return state !== undefined && (state.startsWith('22') || state === '23514');
}

const array = <T>(value: T[] | undefined): T[] => (Array.isArray(value) ? value : []);

/**
 * Turns stored webhook deliveries into rows: every entry, change, message and
 * status in them, a few statements per batch rather than per item. Safe to
 * run again for the same deliveries (and by two processes at once): messages
 * are de-duplicated by their unique wamid, contacts and statuses only move
 * forward, and a contact's flush is armed when its buffer starts, or checked
 * whenever some of its messages were stored before (the attempt that stored
 * them may have died before arming it). One bad message never costs the others.
 */
/** A webhook object as PostgreSQL can store it (no NUL, no lone surrogate). */
function storable(value: object): Record<string, unknown> {
  return JSON.parse(storableJson(value)) as Record<string, unknown>;
}

/** The digits of a number the platform wrote (null when it wrote none). */
function digits(value: unknown): string | null {
  return typeof value === 'string' && value.length <= 64 ? value.replace(/\D/g, '') || null : null;
}

/**
 * The customer a webhook field names: by number (digits only) and/or by
 * user id. Null when it names neither usably.
 */
function customer(waId: unknown, userId: unknown): Identity | null {
  const number = fitText(waId, 32);
  const identity = {
    waId: number && /^\d+$/.test(number) ? number : null,
    userId: fitText(userId, 128) ?? null,
  };
  return identity.waId || identity.userId ? identity : null;
}

/** An identity to resolve with nothing else known of it (no profile, no inbound time). */
function bareIdentity(identity: Identity): IdentityRow {
  return {
    key: identityKey(identity),
    waId: identity.waId,
    userId: identity.userId,
    parentUserId: null,
    username: null,
    name: null,
    lastInboundAt: null,
  };
}

/** A whole number the platform may write as a number or as text; null when it is neither. */
function wholeNumber(value: unknown): number | null {
  const n = typeof value === 'number' || typeof value === 'string' ? Number(value) : NaN;
  return value !== '' && Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/** A history message's status as the reference writes it (any case), as a stored status. */
function historyStatus(status: unknown): string {
  switch (typeof status === 'string' ? status.toLowerCase() : '') {
    case 'read':
    case 'played':
      return 'read';
    case 'delivered':
      return 'delivered';
    case 'error':
      return 'failed';
    default:
      return 'sent';
  }
}

@Injectable()
export class InboundService implements DeliveryHandler {
  private readonly logger = new Logger(InboundService.name);

  constructor(
    private readonly instances: InstancesService,
    private readonly buffer: ContactBuffer,
    private readonly messages: MessageStore,
    private readonly sent: MessagesService,
    private readonly contacts: ContactStore,
    private readonly templates: TemplateStore,
    private readonly history: HistoryStore,
    private readonly metrics: MetricsService,
    private readonly events: EventWake,
    private readonly optOuts: OptOuts,
    config: AppConfig,
  ) {
    this.optOut = new Set(config.OPT_OUT_WORDS.map((word) => word.trim().toUpperCase()));
    this.optIn = new Set(config.OPT_IN_WORDS.map((word) => word.trim().toUpperCase()));
    this.optWords = new Set([...this.optOut, ...this.optIn]);
  }

  private readonly optOut: ReadonlySet<string>;
  private readonly optIn: ReadonlySet<string>;
  private readonly optWords: ReadonlySet<string>;

  async processBatch(deliveries: WebhookDelivery[]): Promise<DeliveryResult> {
    const result: DeliveryResult = {
      stored: 0,
      duplicates: 0,
      invalid: 0,
      statuses: 0,
      templateEvents: 0,
      unrouted: 0,
      inactive: 0,
    };
    const work = new Map<string, InstanceWork>();
    const upgrades: string[] = [];
    const limits = new Map<string, number | null>();
    const preferences: MessagesValue[] = [];
    const echoes: MessagesValue[] = [];
    const shared = new Set<unknown>();
    const phoneBooks: MessagesValue[] = [];
    const histories: MessagesValue[] = [];
    const templateEvents: Array<{
      entry: { id?: unknown; time?: unknown };
      field: (typeof TEMPLATE_FIELDS)[number];
      value: TemplateStatusValue;
      receivedAt: Date;
    }> = [];
    for (const delivery of deliveries) {
      let envelope: WebhookEnvelope;
      try {
        envelope = JSON.parse(delivery.body) as WebhookEnvelope;
      } catch {
        // Signed by the platform but not JSON: retrying cannot help.
        result.invalid++;
        this.logger.warn('webhook delivery skipped: its body is not JSON');
        continue;
      }
      const receivedAt = new Date(delivery.receivedAt);
      for (const entry of array(envelope?.entry)) {
        for (const change of array(entry?.changes)) {
          if (change?.field === 'messages' && change.value) {
            await this.collect(change.value, receivedAt, work, result);
          } else if (
            change?.field === 'phone_number_quality_update' &&
            change.value?.event === 'THROUGHPUT_UPGRADE' &&
            typeof change.value.display_phone_number === 'string'
          ) {
            upgrades.push(change.value.display_phone_number);
          } else if (change?.field === 'user_preferences' && change.value) {
            preferences.push(change.value);
          } else if (change?.field === 'smb_message_echoes' && change.value) {
            echoes.push(change.value);
            shared.add(change.value.metadata?.phone_number_id);
          } else if (change?.field === 'smb_app_state_sync' && change.value) {
            phoneBooks.push(change.value);
            shared.add(change.value.metadata?.phone_number_id);
          } else if (change?.field === 'history' && change.value) {
            histories.push(change.value);
            shared.add(change.value.metadata?.phone_number_id);
          } else if (change?.field === 'business_capability_update' && change.value) {
            const limit = dailyLimitOf(
              change.value.max_daily_conversations_per_business ??
                change.value.max_daily_conversation_per_phone,
            );
            if (typeof entry.id === 'string' && limit !== undefined) limits.set(entry.id, limit);
          } else if (isTemplateField(change?.field) && change.value) {
            templateEvents.push({ entry, field: change.field, value: change.value, receivedAt });
          }
        }
      }
    }
    const recheck = new Map<string, { instanceId: string; contactId: string }>();
    const started: BufferSpan[] = [];
    for (const instanceWork of work.values()) {
      const instanceId = instanceWork.instance.id;
      const stored = await this.storeMessages(instanceWork, result);
      started.push(...stored.started);
      for (const contactId of stored.recheck) recheck.set(contactId, { instanceId, contactId });
      await this.applyStatuses(instanceWork, result);
    }
    for (const displayNumber of upgrades) {
      const raised = await this.instances.raiseThroughput(displayNumber, UPGRADED_THROUGHPUT);
      if (raised.length > 0) {
        this.logger.log(
          { instanceIds: raised.map((instance) => instance.id), rate: UPGRADED_THROUGHPUT },
          'the platform upgraded the throughput of a number',
        );
      }
    }
    for (const value of preferences) await this.applyPreferences(value);
    for (const phoneNumberId of shared) {
      if (typeof phoneNumberId !== 'string') continue;
      const marked = await this.instances.markCoexistence(phoneNumberId);
      if (marked) {
        this.logger.log(
          { instanceId: marked.id },
          'the number is shared with the phone app: paced at 20 a second',
        );
      }
    }
    for (const value of echoes) result.stored += await this.storeEchoes(value);
    for (const value of phoneBooks) await this.syncPhoneContacts(value);
    for (const value of histories) await this.importHistory(value);
    for (const [account, limit] of limits) {
      const changed = await this.instances.setDailyLimit(account, limit);
      if (changed.length > 0) {
        this.logger.log(
          { instanceIds: changed.map((instance) => instance.id), dailyLimit: limit },
          "the platform changed the business's daily limit on new customers",
        );
      }
    }
    for (const { entry, field, value, receivedAt } of templateEvents) {
      await this.storeTemplateEvent(entry.id, entry.time, field, value, receivedAt, result);
    }
    for (const outcome of ['duplicates', 'unrouted', 'inactive', 'invalid'] as const) {
      if (result[outcome] > 0) {
        this.metrics.webhookDeliveries.inc(
          { outcome: outcome === 'duplicates' ? 'duplicate' : outcome },
          result[outcome],
        );
      }
    }
    // Stored messages and statuses are events now: the dispatcher need not wait for its poll.
    if (result.stored + result.statuses + result.templateEvents > 0) this.events.notify();
    // One flush per contact, however many of its messages the batch held.
    await this.buffer.scheduleAll([...recheck.values()], started);
    return result;
  }

  /** Adds a `messages` change to its instance's work; unknown and deactivated numbers are counted. */
  private async collect(
    value: MessagesValue,
    receivedAt: Date,
    work: Map<string, InstanceWork>,
    result: DeliveryResult,
  ): Promise<void> {
    const instance = await this.instanceOf(value);
    if (!instance?.is_active) {
      const phoneNumberId = value.metadata?.phone_number_id;
      if (instance) result.inactive++;
      else result.unrouted++;
      this.logger.warn(
        { phoneNumberId, instanceId: instance?.id },
        instance
          ? 'delivery for a deactivated instance ignored'
          : 'delivery for an unknown number ignored',
      );
      return;
    }
    let instanceWork = work.get(instance.id);
    if (!instanceWork) {
      instanceWork = { instance, messages: [], profiles: [], statuses: [] };
      work.set(instance.id, instanceWork);
    }
    for (const message of array(value.messages)) {
      const parsed = inboundMessageRow(message, receivedAt);
      if (parsed.ok) {
        instanceWork.messages.push(parsed.row);
        continue;
      }
      result.invalid++;
      this.logger.warn(
        { instanceId: instance.id, reason: parsed.reason },
        'inbound message skipped: it cannot be stored',
      );
    }
    instanceWork.profiles.push(...array(value.contacts));
    instanceWork.statuses.push(...array(value.statuses));
  }

  /** The instance a change's value names by its number (metadata.phone_number_id). */
  private instanceOf(value: MessagesValue): Promise<Instance | null> {
    const phoneNumberId = value.metadata?.phone_number_id;
    return typeof phoneNumberId === 'string'
      ? this.instances.findByPhoneNumberId(phoneNumberId)
      : Promise.resolve(null);
  }

  /**
   * Stores an instance's messages (new ones only), after finding the contact
   * of each (created, linked or re-keyed as the deliveries say).
   */
  private async storeMessages(work: InstanceWork, result: DeliveryResult): Promise<Stored> {
    if (work.messages.length === 0) return { started: [], recheck: [] };
    const contactIds = await this.contactsOf(work);
    const inserted = await this.insertMessages(work.instance, work.messages, contactIds);
    // Only words stored now count: a re-sent old STOP must not undo a later START.
    await this.applyOptWords(work.messages, contactIds, inserted.words);
    const submitted = new Map<string, number>();
    for (const contactId of contactIds)
      submitted.set(contactId, (submitted.get(contactId) ?? 0) + 1);
    let stored = 0;
    for (const count of inserted.stored.values()) stored += count;
    result.stored += stored;
    result.duplicates += work.messages.length - stored;
    if (!inserted.started) return { started: [], recheck: [...submitted.keys()] };
    const recheck = [...submitted].filter(([id, count]) => (inserted.stored.get(id) ?? 0) < count);
    return { started: inserted.started, recheck: recheck.map(([id]) => id) };
  }

  /**
   * A text that is exactly a stop word opts its contact out (the agent does
   * not answer it, and only templates may be sent to it); a start word opts
   * it back in. The last such word of a contact in the batch decides.
   */
  private async applyOptWords(
    messages: InboundMessageRow[],
    contactIds: string[],
    stored: ReadonlySet<string>,
  ): Promise<void> {
    const decided = new Map<string, boolean>();
    messages.forEach((message, index) => {
      if (!stored.has(message.wamid)) return;
      if (message.word && this.optOut.has(message.word)) decided.set(contactIds[index], true);
      else if (message.word && this.optIn.has(message.word)) decided.set(contactIds[index], false);
    });
    if (decided.size === 0) return;
    for (const optedOut of [true, false]) {
      const ids = [...decided].filter(([, out]) => out === optedOut).map(([id]) => id);
      const changed = await this.optOuts.set(ids, optedOut);
      if (changed.length > 0) {
        this.logger.log(
          { contacts: changed.length },
          optedOut ? 'contacts opted out' : 'contacts opted in',
        );
      }
    }
  }

  /**
   * The contact of each message, in order. Identity changes (system
   * messages) are applied first, so the other messages find the contact under
   * its new keys; for every message, new or re-sent, the contact's profile
   * and last inbound time only move forward.
   */
  private async contactsOf({ instance, messages, profiles }: InstanceWork): Promise<string[]> {
    const rekeyed = new Map<InboundMessageRow, string>();
    for (const message of messages) {
      if (!message.change) continue;
      const contactId = await this.contacts.rekeyContact(instance.id, message.change);
      if (contactId) rekeyed.set(message, contactId);
      else Object.assign(message, message.change.new); // unknown before: known by its new keys
    }
    const others = messages.filter((message) => !rekeyed.has(message));
    const resolved = await this.contacts.resolveContacts(
      instance.id,
      identityRows(others, profiles),
    );
    return messages.map((message) => rekeyed.get(message) ?? resolved.get(identityKey(message))!);
  }

  /**
   * One statement for the messages, in their order (with the arrival time,
   * the sequence orders messages of the same second). If PostgreSQL refuses
   * a value, each message is stored on its own, so one bad message costs only
   * itself (which buffers started is then not known).
   */
  private async insertMessages(
    instance: Instance,
    messages: InboundMessageRow[],
    contactIds: string[],
  ): Promise<Inserted | { stored: Map<string, number>; started: null; words: Set<string> }> {
    try {
      return await this.insertMessageRows(instance, messages, contactIds);
    } catch (error) {
      if (!isDataError(error)) throw error;
    }
    const stored = new Map<string, number>();
    const words = new Set<string>();
    for (const [index, message] of messages.entries()) {
      const contactId = contactIds[index];
      let inserted: Inserted;
      try {
        inserted = await this.insertMessageRows(instance, [message], [contactId]);
      } catch (error) {
        if (!isDataError(error)) throw error;
        this.logger.warn(
          { instanceId: instance.id, wamid: message.wamid, err: (error as Error).message },
          'inbound message stored without its content: PostgreSQL refused it',
        );
        const fallback = { ...message, body: fallbackBody(message) };
        inserted = await this.insertMessageRows(instance, [fallback], [contactId]);
      }
      stored.set(contactId, (stored.get(contactId) ?? 0) + (inserted.stored.get(contactId) ?? 0));
      for (const wamid of inserted.words) words.add(wamid);
    }
    return { stored, started: null, words };
  }

  /**
   * Inserts the new messages and tells, per contact, whether they started
   * its buffer: the statement's snapshot does not see the rows it inserts,
   * so a waiting message it sees was there before.
   */
  private async insertMessageRows(
    instance: Instance,
    messages: InboundMessageRow[],
    contactIds: string[],
  ): Promise<Inserted> {
    const inserted = await this.messages.insertInbound(
      instance.id,
      this.instances.agentEnabled(instance),
      messages.map((message, index) => ({
        ...message,
        contactId: contactIds[index],
        // A stop or start word is not a question for the agent.
        answer: !(message.word && this.optWords.has(message.word)),
      })),
    );
    const started: BufferSpan[] = [];
    for (const { contact_id, first, last, waited } of inserted) {
      if (first && last && !waited) {
        started.push({ instanceId: instance.id, contactId: contact_id, span: { first, last } });
      }
    }
    return {
      stored: new Map(inserted.map((row) => [row.contact_id, row.stored])),
      started,
      words: new Set(inserted.flatMap((row) => row.words ?? [])),
    };
  }

  /**
   * Applies the statuses to the stored messages, never backwards. A status
   * for a wamid not stored yet (it can arrive before the send's answer) is
   * kept on a placeholder row that the send then completes.
   */
  private async applyStatuses(
    { instance, statuses }: InstanceWork,
    result: DeliveryResult,
  ): Promise<void> {
    const { rows: applicable, ignored } = statusRows(statuses);
    if (ignored > 0) this.logger.debug({ instanceId: instance.id, ignored }, 'statuses ignored');
    if (applicable.length === 0) return;
    try {
      await this.messages.applyStatuses(instance.id, applicable);
      result.statuses += applicable.length;
      await this.marketingStops(instance.id, statuses);
    } catch (error) {
      if (!isDataError(error)) throw error;
      result.invalid += applicable.length;
      this.logger.warn(
        { instanceId: instance.id, err: (error as Error).message },
        'statuses skipped: PostgreSQL refused them',
      );
    }
  }

  /**
   * `smb_message_echoes`: what the owner sent from the phone app, stored as
   * sent by `phone_app` (once, and not over a message this service sent);
   * the agent steps back from those customers as for a person's send.
   */
  private async storeEchoes(value: MessagesValue): Promise<number> {
    const instance = await this.instanceOf(value);
    if (!instance?.is_active) return 0;
    const now = new Date();
    const echoes = array(value.message_echoes).flatMap((echo) => {
      const identity = customer(echo?.to, echo?.to_user_id);
      const wamid = fitText(echo?.id, 256);
      if (!identity || !wamid) return [];
      const type = fitText(echo.type, 32) ?? 'unknown';
      return [
        { identity, wamid, type, body: storable(echo), sentAt: messageTime(echo.timestamp, now) },
      ];
    });
    try {
      // A customer the phone app wrote to first becomes a contact here (by either key).
      const contactIds = await this.contacts.resolveContacts(
        instance.id,
        echoes.map(({ identity }) => bareIdentity(identity)),
      );
      const stored = await this.sent.storeEchoes(
        instance.id,
        echoes.flatMap(({ identity, ...echo }) => {
          const contactId = contactIds.get(identityKey(identity));
          if (!contactId) return [];
          const to = identity.waId ? { to: identity.waId } : { recipient: identity.userId! };
          return [{ ...echo, to, contactId }];
        }),
      );
      return stored.length;
    } catch (error) {
      if (!isDataError(error)) throw error;
      this.logger.warn(
        { instanceId: instance.id, err: (error as Error).message },
        'echoes skipped: PostgreSQL refused them',
      );
      return 0;
    }
  }

  /**
   * `smb_app_state_sync`: the owner's phone address book. A number added
   * becomes a contact (named from the book while its own profile names it
   * not); one removed keeps its name but loses the book's.
   */
  private async syncPhoneContacts(value: MessagesValue): Promise<void> {
    const instance = await this.instanceOf(value);
    if (!instance?.is_active) return;
    const now = new Date();
    const entries = array(value.state_sync).flatMap((entry) => {
      const waId = digits(entry?.contact?.phone_number);
      if (entry?.type !== 'contact' || !waId || waId.length > 32) return [];
      const removed = entry.action === 'remove';
      const name = removed
        ? null
        : (fitText(entry.contact?.full_name, 256) ??
          fitText(entry.contact?.first_name, 256) ??
          null);
      return [{ waId, name, removed, at: messageTime(entry.metadata?.timestamp, now) }];
    });
    const added = entries.filter((entry) => !entry.removed);
    if (added.length > 0) {
      await this.contacts.resolveContacts(
        instance.id,
        added.map(({ waId }) => bareIdentity({ waId, userId: null })),
      );
    }
    await this.contacts.setPhoneNames(
      instance.id,
      entries.map(({ waId, name, at }) => ({ waId, name, at })),
    );
  }

  /**
   * `history`: past conversations of a number shared with the phone app,
   * chunk by chunk (any order, maybe twice). Each message is stored once,
   * `imported`: it starts no turn, opens no window and is no message event;
   * each chunk is recorded once, with a `history.imported` event.
   */
  private async importHistory(value: MessagesValue): Promise<void> {
    const instance = await this.instanceOf(value);
    if (!instance?.is_active) return;
    const now = new Date();
    for (const chunk of array(value.history)) {
      if (array(chunk?.errors).length > 0) {
        this.logger.warn({ instanceId: instance.id }, 'the business declined to share its history');
        continue;
      }
      // A thread is named by the customer's number, or by their user id when they hide it.
      const threads = array(chunk?.threads).flatMap((thread) => {
        const id = fitText(thread?.id, 128);
        const identity = id && /^\d+$/.test(id) ? customer(id, undefined) : customer(undefined, id);
        return identity ? [{ identity, messages: array(thread.messages) }] : [];
      });
      const contactIds = await this.contacts.resolveContacts(
        instance.id,
        threads.map(({ identity }) => bareIdentity(identity)),
      );
      const business =
        digits(value.metadata?.display_phone_number) ?? digits(instance.display_phone_number);
      const rows = threads.flatMap(({ identity, messages }) => {
        const contactId = contactIds.get(identityKey(identity));
        if (!contactId) return [];
        return messages.flatMap((message) => {
          const wamid = fitText(message?.id, 256);
          if (!wamid) return [];
          // The customer's messages come from the thread's customer; the business's from its own number.
          const from = digits(message.from);
          const inbound = identity.waId
            ? from === identity.waId
            : message.from_user_id === identity.userId || (from !== null && from !== business);
          return [
            {
              wamid,
              direction: inbound ? ('inbound' as const) : ('outbound' as const),
              contact: (identity.waId ?? identity.userId)!,
              contactId,
              type: fitText(message.type, 32) ?? 'unknown',
              body: storable(message),
              status: inbound ? 'received' : historyStatus(message.history_context?.status),
              sentAt: messageTime(message.timestamp, now),
            },
          ];
        });
      });
      const meta = chunk?.metadata ?? {};
      const phase = wholeNumber(meta.phase);
      const chunkOrder = wholeNumber(meta.chunk_order);
      try {
        if (phase === null || chunkOrder === null) {
          // A chunk that names no place cannot be told from another: its messages are
          // stored (once each, by wamid), and no chunk is recorded.
          this.logger.warn({ instanceId: instance.id }, 'a history chunk without its order');
          await this.messages.insertImported(instance.id, rows);
          continue;
        }
        await this.history.importChunk(
          instance.id,
          { phase, chunkOrder, progress: wholeNumber(meta.progress) ?? 0, messages: rows.length },
          (manager) => this.messages.insertImported(instance.id, rows, manager),
        );
      } catch (error) {
        // A chunk PostgreSQL refuses (a value it cannot hold) costs only itself.
        if (!isDataError(error)) throw error;
        this.logger.warn(
          { instanceId: instance.id, err: (error as Error).message },
          'a history chunk skipped: PostgreSQL refused it',
        );
      }
    }
  }

  /** A send refused with 131050 (the customer stopped marketing messages) marks them. */
  private async marketingStops(
    instanceId: string,
    statuses: Array<Partial<InboundStatus> | null>,
  ): Promise<void> {
    for (const status of statuses) {
      const code = (array(status?.errors)[0] as { code?: unknown } | undefined)?.code;
      const identity = customer(status?.recipient_id, status?.recipient_user_id);
      if (status?.status !== 'failed' || code !== MARKETING_STOPPED_CODE || !identity) continue;
      const at = messageTime(status.timestamp, new Date());
      const address = (identity.waId ?? identity.userId)!;
      await this.contacts.setMarketingPreference(instanceId, address, true, at, !!identity.waId);
    }
  }

  /**
   * `user_preferences`: a customer who stops marketing messages in the app
   * is marked (marketing templates and campaigns pass over them), one who
   * resumes is not any more; an older preference re-delivered changes
   * nothing. A customer not known yet becomes a contact.
   */
  private async applyPreferences(value: MessagesValue): Promise<void> {
    const instance = await this.instanceOf(value);
    if (!instance?.is_active) return;
    for (const preference of array(value.user_preferences)) {
      const identity = customer(preference?.wa_id, preference?.user_id);
      const stop = preference?.value === 'stop';
      if (!identity || preference.category !== 'marketing_messages') continue;
      if (!stop && preference.value !== 'resume') continue;
      const at = messageTime(preference.timestamp, new Date());
      const profile = array(value.contacts).find(
        (contact) =>
          (identity.waId !== null && contact?.wa_id === identity.waId) ||
          (identity.userId !== null && contact?.user_id === identity.userId),
      );
      const known = {
        waId: identity.waId ?? customer(profile?.wa_id, undefined)?.waId ?? null,
        userId: identity.userId ?? fitText(profile?.user_id, 128) ?? null,
      };
      await this.contacts.resolveContacts(instance.id, [
        { ...bareIdentity(known), name: fitText(profile?.profile?.name, 256) ?? null },
      ]);
      await this.contacts.setMarketingPreference(
        instance.id,
        (known.waId ?? known.userId)!,
        stop,
        at,
        known.waId !== null,
      );
      this.logger.log(
        { instanceId: instance.id, preference: preference.value },
        'a customer changed their marketing preference',
      );
    }
  }

  /** Keeps every template event, and moves the catalogue's template forward. */
  private async storeTemplateEvent(
    channelAccountId: unknown,
    time: unknown,
    field: (typeof TEMPLATE_FIELDS)[number],
    value: TemplateStatusValue,
    receivedAt: Date,
    result: DeliveryResult,
  ): Promise<void> {
    const account = fitText(channelAccountId, 64);
    // Template events name the business account (entry.id = channel_account_id).
    if (!account || !(await this.instances.hasActiveInstanceFor(account))) {
      result.unrouted++;
      this.logger.warn(
        { channelAccountId: account },
        'template event for an unknown account ignored',
      );
      return;
    }
    const templateId = fitText(String(value.message_template_id ?? ''), 64);
    const change = templateChange(field, value);
    if (!templateId || !change) {
      result.invalid++;
      return;
    }
    await this.templates.record({
      channelAccountId: account,
      templateId,
      templateName: fitText(value.message_template_name, 512),
      templateLanguage: fitText(value.message_template_language, 16),
      ...change,
      at: messageTime(time, receivedAt),
    });
    result.templateEvents++;
  }
}

function isTemplateField(field: unknown): field is (typeof TEMPLATE_FIELDS)[number] {
  return (TEMPLATE_FIELDS as readonly unknown[]).includes(field);
}

/** What a template field's value changes; null when it names no change. */
function templateChange(
  field: (typeof TEMPLATE_FIELDS)[number],
  value: TemplateStatusValue,
): Pick<
  TemplateEvent,
  'change' | 'event' | 'reason' | 'quality' | 'category' | 'previousCategory' | 'announced'
> | null {
  if (field === 'message_template_status_update') {
    const event = fitText(value.event, 32);
    return event
      ? {
          change: 'status',
          event,
          reason: fitText(value.reason, 4096),
          category: fitText(value.message_template_category, 32),
        }
      : null;
  }
  if (field === 'message_template_quality_update') {
    const quality = fitText(value.new_quality_score, 16);
    return quality ? { change: 'quality', event: quality, reason: null, quality } : null;
  }
  // A notice names the category to come in `correct_category` (its `new_category`, when
  // present, is the one the template has until then); the change names only `new_category`.
  const announced = Boolean(value.correct_category);
  const category = fitText(value.correct_category ?? value.new_category, 32);
  if (!category) return null;
  return {
    change: 'category',
    event: announced ? `ANNOUNCED_${category}`.slice(0, 32) : category,
    reason: announced ? 'announced' : null,
    category,
    previousCategory: fitText(value.previous_category, 32),
    announced,
  };
}
