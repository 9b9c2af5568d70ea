import { Injectable } from '@nestjs/common';
import { AppException } from '../common/app.exception.js';
import { unavailable } from '../common/unavailable.js';
import { BatchWriter } from '../common/batch-writer.js';
import { LocalCache } from '../common/local-cache.js';
import { AppConfig } from '../config/app-config.js';
import { WINDOW_TOPIC } from '../common/cache-topics.js';
import { ContactStore, type PersonSend } from '../contacts/contact.store.js';
import type { ContactKeys } from '../contacts/contact.types.js';
import { CacheInvalidationService } from '../redis/cache-invalidation.service.js';
import { MessageStore } from './message.store.js';
import type { SentBy, StoredMessage } from './message.types.js';
import type { PersonRef } from '../accounts/account.types.js';

export const SERVICE_WINDOW_MS = 24 * 60 * 60 * 1000;
const WINDOW_CACHE_TTL_MS = 60_000;

/** An outbound record that cannot be written is tried again after these waits (a database blip). */
const RECORD_RETRY_DELAYS_MS = [100, 400, 1600];

/** Whom a send goes to: a number (`to`), or a business-scoped user id (`recipient`). */
export type Recipient =
  { to: string; recipient?: undefined } | { to?: undefined; recipient: string };

/**
 * How much longer than HANDOFF_AUTO_PAUSE_S a person's pause is written: a
 * tenth of it, a minute at most. Later sends within that slack leave it as it
 * is (it still ends after them), so a chat is not a write and an event per message.
 */
export function autoPauseSlackSeconds(pauseSeconds: number): number {
  return Math.min(60, pauseSeconds / 10);
}

/** The address a recipient is stored and shown under: its number or its user id. */
export function addressOf(recipient: Recipient): string {
  return recipient.to ?? recipient.recipient;
}

/** The recipient a validated /send body names (exactly one of `to` and `recipient`). */
export function recipientOf(body: { to?: string; recipient?: string }): Recipient {
  return body.to !== undefined ? { to: body.to } : { recipient: body.recipient! };
}

/** How to reach a contact: by number when it is known, else by user id. */
export function recipientOfContact(contact: ContactKeys): Recipient | null {
  if (contact.wa_id) return { to: contact.wa_id };
  return contact.user_id ? { recipient: contact.user_id } : null;
}

export interface OutboundRecord {
  instanceId: string;
  recipient: Recipient;
  /** The contact, when the sender knows it (the agent's replies). */
  contactId?: string;
  /** Who sent it (absent on records parked before this field: a client). */
  sentBy?: SentBy;
  /** A person's send: who. */
  person?: PersonRef | null;
  /** A send that does not pause the agent though not the agent's (a campaign's). */
  unattended?: boolean;
  type: string;
  body: Record<string, unknown>;
  wamid: string;
}

/** What the phone app sent (an echo), to store. */
export interface Echo {
  to: Recipient;
  contactId: string;
  wamid: string;
  type: string;
  body: Record<string, unknown>;
  sentAt: Date;
}

/** The rules around stored messages: the service window, recording sends, reading one back. */
@Injectable()
export class MessagesService {
  private readonly openUntil = new LocalCache<number>(WINDOW_CACHE_TTL_MS, 100_000);
  private readonly writer: BatchWriter<OutboundRecord>;
  private probe?: Promise<void>;

  private readonly pauses: BatchWriter<PersonSend>;

  constructor(
    private readonly store: MessageStore,
    private readonly contacts: ContactStore,
    private readonly config: AppConfig,
    invalidation: CacheInvalidationService,
  ) {
    this.writer = new BatchWriter((records) => this.storeOutbound(records), RECORD_RETRY_DELAYS_MS);
    this.pauses = new BatchWriter(
      (sends) =>
        this.contacts.pauseForPeople(
          sends,
          this.config.HANDOFF_AUTO_PAUSE_S,
          autoPauseSlackSeconds(this.config.HANDOFF_AUTO_PAUSE_S),
        ),
      RECORD_RETRY_DELAYS_MS,
    );
    invalidation.on(WINDOW_TOPIC, (key) => this.openUntil.delete(key));
  }

  /**
   * Throws 503 unavailable when the store cannot be reached, so a send is not
   * made that could not be recorded. Sends that ask at the same moment share
   * one probe, so under load it costs a fraction of a round trip each.
   */
  async assertReachable(): Promise<void> {
    this.probe ??= this.store
      .ping()
      .then(
        () => undefined,
        () => {
          throw unavailable();
        },
      )
      .finally(() => {
        this.probe = undefined;
      });
    await this.probe;
  }

  /** Refuses a marketing template to a customer who stopped marketing messages in the app (422). */
  async assertMarketingAllowed(instanceId: string, to: Recipient): Promise<void> {
    const address = addressOf(to);
    if (await this.contacts.marketingOptedOut(instanceId, address, to.to !== undefined)) {
      throw new AppException(
        'contact_opted_out',
        `${address} stopped marketing messages in the app: a marketing template would fail (131050) until they resume them`,
      );
    }
  }

  /**
   * Refuses a non-template send to a contact who opted out (422
   * contact_opted_out), or who has not written in the last 24 hours (422
   * service_window_closed) unless SERVICE_WINDOW_ENFORCE=false. The contact
   * is found by whichever key the send names.
   */
  async assertWindowOpen(instanceId: string, to: Recipient, now = Date.now()): Promise<void> {
    // A known "may send until" stays true without a read: a window only moves
    // later, and an opt-out drops the entry in every process (WINDOW_TOPIC).
    const address = addressOf(to);
    const key = `${instanceId}:${address}`;
    if ((this.openUntil.get(key, now) ?? 0) > now) return;
    const { last, optedOut } = await this.contacts.lastInbound(
      instanceId,
      address,
      to.to !== undefined,
    );
    if (optedOut) {
      throw new AppException(
        'contact_opted_out',
        `${address} opted out (a stop word): only a template (POST /send/template) can be sent until they opt in again`,
      );
    }
    if (!this.config.SERVICE_WINDOW_ENFORCE) {
      this.openUntil.set(key, now + WINDOW_CACHE_TTL_MS, now);
      return;
    }
    const lastAt = last?.getTime();
    if (lastAt !== undefined && now - lastAt <= SERVICE_WINDOW_MS) {
      this.openUntil.set(key, lastAt + SERVICE_WINDOW_MS, now);
      return;
    }
    throw new AppException(
      'service_window_closed',
      `${address} has not written in the last 24 hours: only a template (POST /send/template) can be sent`,
    );
  }

  /**
   * A person is answering this contact (through the API, or logged in:
   * `person`): the agent pauses for it until at least HANDOFF_AUTO_PAUSE_S
   * after this send (writes of the same moment share one statement). Written before the message goes,
   * so a reply the agent has in flight is not sent after the person's, and
   * again once it went (its end follows the real send).
   */
  async pauseForPerson(
    instanceId: string,
    to: Recipient,
    person: PersonRef | null = null,
  ): Promise<void> {
    if (this.config.HANDOFF_AUTO_PAUSE_S <= 0) return;
    await this.pauses.write({
      instanceId,
      address: addressOf(to),
      byNumber: to.to !== undefined,
      person,
    });
  }

  /**
   * Whom a send goes to now, as a retry reads it: a number or user-id change
   * may have moved the contact since the send began. A reply follows its
   * contact (`contactId`); a client's send keeps the kind of address it named
   * while the contact has one. On a read error, the address as it was.
   */
  async currentRecipient(
    instanceId: string,
    recipient: Recipient,
    contactId?: string,
  ): Promise<Recipient> {
    try {
      if (contactId) {
        const keys = await this.contacts.contactKeys(contactId);
        return (keys && recipientOfContact(keys)) ?? recipient;
      }
      const byNumber = recipient.to !== undefined;
      const moved = await this.contacts.movedKeys(instanceId, addressOf(recipient), byNumber);
      if (!moved) return recipient;
      const number: Recipient | null = moved.wa_id ? { to: moved.wa_id } : null;
      const userId: Recipient | null = moved.user_id ? { recipient: moved.user_id } : null;
      return (byNumber ? (number ?? userId) : (userId ?? number)) ?? recipient;
    } catch {
      return recipient;
    }
  }

  /**
   * Stores an accepted send. A status may have arrived first (webhooks race
   * the send's answer): then the placeholder row is completed, its status kept.
   */
  recordOutbound(record: OutboundRecord): Promise<void> {
    return this.writer.write(record);
  }

  /** Records accepted sends (what the batch writer and the parked records hand over). */
  async storeOutbound(records: OutboundRecord[]): Promise<void> {
    const { completed } = await this.store.insertOutbound(
      records.map(({ recipient, unattended: _, ...record }) => ({
        ...record,
        sentBy: record.sentBy ?? 'api',
        address: addressOf(recipient),
        byNumber: recipient.to !== undefined,
      })),
    );
    // A send that pauses nobody completed a row stored before it: maybe the
    // platform's echo of it, which came first and paused the agent as the
    // phone app's. That pause was never a person's. (Also on a retry of this
    // record: the lift only ends a phone-app pause nothing else explains.)
    const unattended = new Set(
      records.filter((r) => r.sentBy === 'agent' || r.unattended).map((r) => r.wamid),
    );
    await this.liftEchoPauses(completed.filter((row) => unattended.has(row.wamid)));
  }

  /**
   * Stores what the owner sent from the platform's phone app (coexistence
   * echoes) as sent by `phone_app`, at the time the phone sent it; an echo of
   * a message this service sent (the same wamid) changes nothing. The phone
   * app's count as a person answering: the agent pauses for each of their
   * contacts for HANDOFF_AUTO_PAUSE_S from the echo's time (an echo delivered
   * later than that pauses nothing). The wamids stored.
   */
  async storeEchoes(instanceId: string, echoes: Echo[], now = Date.now()): Promise<string[]> {
    if (echoes.length === 0) return [];
    const { wamids } = await this.store.insertOutbound(
      echoes.map((echo) => ({
        instanceId,
        wamid: echo.wamid,
        address: addressOf(echo.to),
        byNumber: echo.to.to !== undefined,
        contactId: echo.contactId,
        type: echo.type,
        body: echo.body,
        sentBy: 'phone_app' as const,
        sentAt: echo.sentAt,
      })),
      { placeholdersOnly: true },
    );
    const pauseMs = this.config.HANDOFF_AUTO_PAUSE_S * 1000;
    if (pauseMs <= 0) return wamids;
    // Every echo that is the phone app's, new or stored by an earlier try of this
    // delivery (which may have died before its pause): pausing again changes nothing.
    const phoneApp = async () =>
      new Set(
        await this.store.phoneAppEchoes(
          instanceId,
          echoes.map((echo) => echo.wamid),
        ),
      );
    const before = await phoneApp();
    const pausing = echoes.filter(
      (echo) => before.has(echo.wamid) && echo.sentAt.getTime() + pauseMs > now,
    );
    const latest = new Map<string, Echo>();
    for (const echo of pausing) {
      const known = latest.get(echo.contactId);
      if (!known || known.sentAt < echo.sentAt) latest.set(echo.contactId, echo);
    }
    for (const echo of latest.values()) {
      await this.pauses.write({
        instanceId,
        address: addressOf(echo.to),
        byNumber: echo.to.to !== undefined,
        phoneApp: true,
        // The pause runs from the phone's reply, not from its late delivery.
        seconds: (echo.sentAt.getTime() + pauseMs - now) / 1000,
      });
    }
    // This service's own send may have been recorded over an echo meanwhile
    // (its record lifts pauses it finds; this one may have come after it looked):
    // each side looks again once it has written, so one of them sees the other.
    // (Every echo not the phone app's now, whatever the first look said: a redelivery
    // after a failed look still lifts; a lift needs a phone-app pause begun after it.)
    const after = await phoneApp();
    await this.liftEchoPauses(
      echoes
        .filter((echo) => !after.has(echo.wamid))
        .map((echo) => ({ wamid: echo.wamid, contact_id: echo.contactId })),
    );
    return wamids;
  }

  /** Ends the pauses echoes of this service's own sends began (ContactStore.liftEchoPauses). */
  private async liftEchoPauses(rows: Array<{ wamid: string; contact_id: string }>): Promise<void> {
    if (rows.length === 0) return;
    await this.contacts.liftEchoPauses(
      [...new Set(rows.map((row) => row.contact_id))],
      rows.map((row) => row.wamid),
      this.config.notForTheAgent,
    );
  }

  async findForInstance(instanceId: string, wamid: string): Promise<StoredMessage> {
    const message = await this.store.find(instanceId, wamid);
    if (!message) throw new AppException('message_not_found', `Message ${wamid} not found`);
    return message;
  }
}
