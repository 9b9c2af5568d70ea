import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
import { AppException } from '../common/app.exception.js';
import { unavailable } from '../common/unavailable.js';
import { BatchWriter } from '../common/batch-writer.js';
import { LocalCache } from '../common/local-cache.js';
import { AppConfig } from '../config/app-config.js';
import { prepared, rows } from '../database/sql.js';
import type { InboundMessage } from '../platform/webhook-payload.js';
import type { IdentityChange, IdentityRow } from './contact-identity.js';
import { Contact } from './entities/contact.entity.js';
import { Message } from './entities/message.entity.js';

export const SERVICE_WINDOW_MS = 24 * 60 * 60 * 1000;
const WINDOW_CACHE_TTL_MS = 60_000;

/** An outbound record that cannot be written is tried again after these waits (a database blip). */
const RECORD_RETRY_DELAYS_MS = [100, 400, 1600];

/** When a contact's waiting messages arrived: the first and the last. */
export interface AwaitingSpan {
  first: Date;
  last: Date;
}

/** A contact's keys and profile, as the agent and the client see them. */
export interface ContactKeys {
  wa_id: string | null;
  user_id: string | null;
  parent_user_id: string | null;
  username: string | null;
  name: string | null;
}

/** Whom a send goes to: a number (`to`), or a business-scoped user id (`recipient`). */
export type Recipient =
  { to: string; recipient?: undefined } | { to?: undefined; recipient: string };

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

/** A stored message with its contact's keys. */
export interface StoredMessage extends Message {
  contact_wa_id: string | null;
  contact_user_id: string | null;
}

export interface OutboundRecord {
  instanceId: string;
  recipient: Recipient;
  /** The contact, when the sender knows it (the agent's replies). */
  contactId?: string;
  type: string;
  body: Record<string, unknown>;
  wamid: string;
}

/** The message store, each contact's identity and service window. */
@Injectable()
export class MessagesService {
  private readonly openUntil = new LocalCache<number>(WINDOW_CACHE_TTL_MS, 100_000);
  private readonly writer: BatchWriter<OutboundRecord>;
  private probe?: Promise<void>;

  private readonly db: DataSource;

  constructor(
    @InjectRepository(Message) private readonly messages: Repository<Message>,
    @InjectRepository(Contact) private readonly contacts: Repository<Contact>,
    private readonly config: AppConfig,
  ) {
    this.db = messages.manager.connection;
    this.writer = new BatchWriter((records) => this.storeOutbound(records), RECORD_RETRY_DELAYS_MS);
  }

  /**
   * Throws 503 unavailable when the store cannot be reached, so a send is not
   * made that could not be recorded. Sends that ask at the same moment share
   * one probe, so under load it costs a fraction of a round trip each.
   */
  async assertReachable(): Promise<void> {
    this.probe ??= this.messages
      .query('SELECT 1')
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

  /**
   * Refuses a non-template send when the contact has not written in the last
   * 24 hours (422 service_window_closed), unless SERVICE_WINDOW_ENFORCE=false.
   * The contact is found by whichever key the send names.
   */
  async assertWindowOpen(instanceId: string, to: Recipient, now = Date.now()): Promise<void> {
    if (!this.config.SERVICE_WINDOW_ENFORCE) return;
    // A window only ever moves later (a new inbound message extends it), so a
    // known "open until" stays true without invalidation; closed ones are re-read.
    const address = addressOf(to);
    const key = `${instanceId}:${address}`;
    if ((this.openUntil.get(key, now) ?? 0) > now) return;
    const [contact] = await rows<{ last: Date | null }>(
      this.contacts,
      to.to !== undefined
        ? 'SELECT last_inbound_at AS last FROM contacts WHERE instance_id = $1 AND wa_id = $2'
        : `SELECT max(last_inbound_at) AS last FROM contacts
           WHERE instance_id = $1 AND (user_id = $2 OR parent_user_id = $2)`,
      [instanceId, address],
    );
    const last = contact?.last?.getTime();
    if (last !== undefined && now - last <= SERVICE_WINDOW_MS) {
      this.openUntil.set(key, last + SERVICE_WINDOW_MS, now);
      return;
    }
    throw new AppException(
      'service_window_closed',
      `${address} has not written in the last 24 hours: only a template (POST /send/template) can be sent`,
    );
  }

  /**
   * The contact of each identity (see mc_resolve_contact: found by either key,
   * linked, merged or created), with its profile and last inbound time
   * brought forward. Numbers already known, without a user id (most
   * messages), are found and brought forward in one set-based statement;
   * the others go through mc_resolve_contact, in one more.
   */
  async resolveContacts(
    instanceId: string,
    identities: IdentityRow[],
  ): Promise<Map<string, string>> {
    const resolved = new Map<string, string>();
    const byNumber = identities.filter((i) => i.waId !== null && i.userId === null);
    if (byNumber.length > 0) {
      const known = await prepared<{ n: string; id: string }>(
        this.db,
        'contacts_known_numbers',
        `WITH i AS (
           SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[])
             WITH ORDINALITY AS i(wa_id, parent_user_id, username, name, at, n)
         ), known AS (
           SELECT i.*, c.id FROM i JOIN contacts c ON c.instance_id = $1 AND c.wa_id = i.wa_id
         ), touched AS (
           UPDATE contacts c SET
             parent_user_id = COALESCE(k.parent_user_id, c.parent_user_id),
             username = COALESCE(k.username, c.username),
             name = COALESCE(k.name, c.name),
             last_inbound_at = GREATEST(c.last_inbound_at, k.at),
             updated_at = now()
           FROM known k
           WHERE c.id = k.id
             AND (k.parent_user_id IS NOT NULL AND c.parent_user_id IS DISTINCT FROM k.parent_user_id
               OR k.username IS NOT NULL AND c.username IS DISTINCT FROM k.username
               OR k.name IS NOT NULL AND c.name IS DISTINCT FROM k.name
               OR k.at > COALESCE(c.last_inbound_at, '-infinity'))
         )
         SELECT n, id FROM known`,
        [
          instanceId,
          byNumber.map((i) => i.waId),
          byNumber.map((i) => i.parentUserId),
          byNumber.map((i) => i.username),
          byNumber.map((i) => i.name),
          byNumber.map((i) => i.lastInboundAt),
        ],
      );
      for (const row of known) resolved.set(byNumber[Number(row.n) - 1].key, row.id);
    }
    const others = identities.filter((i) => !resolved.has(i.key));
    if (others.length === 0) return resolved;
    const found = await prepared<{ n: string; id: string }>(
      this.db,
      'contacts_resolve',
      `SELECT i.n, mc_resolve_contact($1, i.wa_id, i.user_id, i.parent_user_id, i.username, i.name, i.at) AS id
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
         WITH ORDINALITY AS i(wa_id, user_id, parent_user_id, username, name, at, n)
       ORDER BY i.n`,
      [
        instanceId,
        others.map((i) => i.waId),
        others.map((i) => i.userId),
        others.map((i) => i.parentUserId),
        others.map((i) => i.username),
        others.map((i) => i.name),
        others.map((i) => i.lastInboundAt),
      ],
    );
    for (const row of found) resolved.set(others[Number(row.n) - 1].key, row.id);
    return resolved;
  }

  /** Applies a number or user-id change to the contact known by the old keys; null when unknown. */
  async rekeyContact(instanceId: string, change: IdentityChange): Promise<string | null> {
    const [row] = await rows<{ id: string | null }>(
      this.contacts,
      'SELECT mc_rekey_contact($1, $2, $3, $4, $5, $6) AS id',
      [
        instanceId,
        change.old.waId,
        change.old.userId,
        change.new.waId,
        change.new.userId,
        change.new.parentUserId,
      ],
    );
    return row?.id ?? null;
  }

  /** A contact's keys and profile; null when it is gone. */
  async contactKeys(contactId: string): Promise<ContactKeys | null> {
    const [contact] = await rows<ContactKeys>(
      this.contacts,
      'SELECT wa_id, user_id, parent_user_id, username, name FROM contacts WHERE id = $1',
      [contactId],
    );
    return contact ?? null;
  }

  /**
   * Stores an accepted send. A status may have arrived first (webhooks race
   * the send's answer): then the placeholder row is completed, its status kept.
   */
  recordOutbound(record: OutboundRecord): Promise<void> {
    return this.writer.write(record);
  }

  /**
   * One INSERT for every send that finished in the same tick. A number sent
   * to becomes a contact if it was not one; a user id is looked up (it may be
   * a parent id, shared by several).
   */
  async storeOutbound(records: OutboundRecord[]): Promise<void> {
    await this.messages.query(
      `INSERT INTO messages (instance_id, wamid, direction, contact, contact_id, type, body, status)
       SELECT r.instance_id, r.wamid, 'outbound', r.contact,
         CASE WHEN r.contact_id IS NOT NULL THEN r.contact_id
           WHEN r.by_number
           THEN mc_resolve_contact(r.instance_id, r.contact, NULL, NULL, NULL, NULL, NULL)
           ELSE (SELECT c.id FROM contacts c
                 WHERE c.instance_id = r.instance_id
                   AND (c.user_id = r.contact OR c.parent_user_id = r.contact)
                 ORDER BY c.user_id = r.contact DESC LIMIT 1)
         END,
         r.type, r.body, 'sent'
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::boolean[], $5::text[], $6::jsonb[],
                   $7::uuid[])
         AS r(instance_id, wamid, contact, by_number, type, body, contact_id)
       ON CONFLICT (wamid) DO UPDATE SET
         instance_id = EXCLUDED.instance_id, direction = EXCLUDED.direction,
         contact = EXCLUDED.contact, contact_id = EXCLUDED.contact_id, type = EXCLUDED.type,
         body = EXCLUDED.body, updated_at = now()`,
      [
        records.map((r) => r.instanceId),
        records.map((r) => r.wamid),
        records.map((r) => addressOf(r.recipient)),
        records.map((r) => r.recipient.to !== undefined),
        records.map((r) => r.type),
        records.map((r) => JSON.stringify(r.body)),
        records.map((r) => r.contactId ?? null),
      ],
    );
  }

  /** When each contact's messages waiting for a turn arrived; contacts with none are left out. */
  async awaitingSpans(contactIds: string[]): Promise<Map<string, AwaitingSpan>> {
    const found = await prepared<{ contact_id: string; first: Date; last: Date }>(
      this.db,
      'messages_awaiting_spans',
      `SELECT contact_id, min(received_at) AS first, max(received_at) AS last FROM messages
       WHERE awaiting_turn AND contact_id = ANY($1::uuid[]) GROUP BY contact_id`,
      [contactIds],
    );
    return new Map(found.map((span) => [span.contact_id, { first: span.first, last: span.last }]));
  }

  /**
   * Contacts whose waiting messages should have gone to the agent by `asOf`
   * (the quiet delay after the last one, unless null, or the max wait after
   * the first, passed more than `graceMs` before it) and that have no open
   * turn to wait for.
   */
  overdueContacts(
    delayMs: number | null,
    maxWaitMs: number,
    graceMs: number,
    asOf: Date,
    limit = 1000,
  ): Promise<Array<{ instance_id: string; contact_id: string }>> {
    return rows(
      this.messages,
      `SELECT m.instance_id, m.contact_id FROM messages m
       WHERE m.awaiting_turn
         AND NOT EXISTS (
           SELECT 1 FROM turns t WHERE t.contact_id = m.contact_id
             AND t.status IN ('claimed', 'calling', 'answered', 'sending'))
       GROUP BY m.instance_id, m.contact_id
       HAVING max(m.received_at) < $4::timestamptz - ($1::float8 + $3::float8) * interval '1 millisecond'
           OR min(m.received_at) < $4::timestamptz - ($2::float8 + $3::float8) * interval '1 millisecond'
       LIMIT $5`,
      [delayMs, maxWaitMs, graceMs, asOf, limit],
    );
  }

  /** A page of the contacts with messages waiting, by contact id, with their spans. */
  awaitingBuffers(
    after: string | null,
    limit: number,
  ): Promise<Array<{ instance_id: string; contact_id: string; first: Date; last: Date }>> {
    return rows(
      this.messages,
      `SELECT instance_id, contact_id, min(received_at) AS first, max(received_at) AS last
       FROM messages
       WHERE awaiting_turn AND ($1::uuid IS NULL OR contact_id > $1::uuid)
       GROUP BY contact_id, instance_id ORDER BY contact_id LIMIT $2`,
      [after, limit],
    );
  }

  /** Seconds since the oldest message still waiting for a turn arrived (0 when none waits). */
  async oldestAwaitingAgeSeconds(): Promise<number> {
    const [oldest] = await rows<{ age: number | null }>(
      this.messages,
      `SELECT extract(epoch FROM now() - min(received_at))::float8 AS age
       FROM messages WHERE awaiting_turn`,
    );
    return Math.max(0, oldest?.age ?? 0);
  }

  /** A turn's messages as the platform sent them: by timestamp, then arrival. */
  async ofTurn(turnId: string): Promise<InboundMessage[]> {
    const found = await rows<{ body: InboundMessage }>(
      this.messages,
      `SELECT body FROM messages WHERE turn_id = $1 ORDER BY created_at, received_at, seq`,
      [turnId],
    );
    return found.map((row) => row.body);
  }

  async findForInstance(instanceId: string, wamid: string): Promise<StoredMessage> {
    const [message] = await rows<StoredMessage>(
      this.messages,
      `SELECT m.*, c.wa_id AS contact_wa_id, c.user_id AS contact_user_id
       FROM messages m LEFT JOIN contacts c ON c.id = m.contact_id
       WHERE m.instance_id = $1 AND m.wamid = $2`,
      [instanceId, wamid],
    );
    if (!message) throw new AppException('message_not_found', `Message ${wamid} not found`);
    return message;
  }
}
