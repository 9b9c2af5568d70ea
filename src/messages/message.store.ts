import type { TimeIdPosition } from '../common/time-id-cursor.js';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { isoFromEpochMicros } from '../common/epoch-micros.js';
import { contactOrder } from '../database/lock-order.js';
import { epochMicros, prepared, rows } from '../database/sql.js';
import type { InboundMessage } from '../platform/webhook-payload.js';
import type { IdentityChange, IdentityRow } from './contact-identity.js';
import {
  STATUS_RANK,
  type AwaitingSpan,
  type Contact,
  type ContactKeys,
  type HandoffBy,
  type Message,
  type SentBy,
  type StatusRow,
  type StoredMessage,
} from './message.types.js';

/** An accepted send to record. */
export interface OutboundRow {
  instanceId: string;
  /** A number or a user id. */
  address: string;
  byNumber: boolean;
  /** The contact, when the sender knows it (the agent's replies). */
  contactId?: string;
  sentBy: SentBy;
  type: string;
  body: Record<string, unknown>;
  wamid: string;
}

/** A new inbound message, ready to insert. */
export interface InboundRow {
  wamid: string;
  /** The sender's address as the message named it. */
  address: string;
  contactId: string;
  type: string;
  /** The platform's object, as JSON. */
  body: string;
  sentAt: Date;
  receivedAt: Date;
  /** false: stored without going to the agent (a stop or start word). */
  answer?: boolean;
}

/**
 * Where a message sits in its conversation's arrival order, the order the
 * agent gets a burst in: the second of its time (inbound: the platform's
 * timestamp, whole seconds; outbound: when recorded), then when it reached
 * the service (inbound: its delivery at the webhook), then `seq`.
 */
export interface ArrivalPosition {
  /** Seconds since the epoch. */
  second: bigint;
  /** Microseconds since the epoch. */
  receivedUs: bigint;
  seq: bigint;
}

/** The arrival order's first key, as the index ix_messages_contact_arrival has it. */
const ARRIVAL_SECOND = `date_trunc('second', m.created_at AT TIME ZONE 'UTC')`;

/** Where a message sits in the order messages were stored: its transaction, then `seq`. */
export interface StoredPosition {
  tx: bigint;
  seq: bigint;
}

/** A message of a conversation, with its arrival times in microseconds. */
export type ConversationMessage = Message & { created_us: string; received_us: string };

/** A conversation read: its messages and the snapshot's horizon (see readConversation). */
export interface ConversationRead {
  messages: ConversationMessage[];
  horizon: bigint;
}

const STATUS_RANK_SQL = (column: string): string =>
  `(CASE ${column} ${Object.entries(STATUS_RANK)
    .map(([status, rank]) => `WHEN '${status}' THEN ${rank}`)
    .join(' ')} ELSE 0 END)`;

/** Per contact, what an insert of inbound messages stored. */
export interface InsertedInbound {
  contact_id: string;
  stored: number;
  /** The stored messages that wait for a turn: the first and last arrival (null when none). */
  first: Date | null;
  last: Date | null;
  /** Whether messages of this contact were waiting before these. */
  waited: boolean;
  /** The stored messages marked not to be answered (stop and start words), by wamid. */
  words: string[] | null;
}

/**
 * The only home of SQL on `messages` and `contacts`: the two change together
 * (a message names its contact; an inbound message moves its contact's
 * window), through the identity functions of migration ContactIdentities.
 */
@Injectable()
export class MessageStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }

  /**
   * When the contact a send names last wrote: by number, or by user id (or
   * parent id, which several contacts may share: the latest of them).
   */
  async lastInbound(
    instanceId: string,
    address: string,
    byNumber: boolean,
  ): Promise<{ last: Date | null; optedOut: boolean }> {
    const [contact] = await rows<{ last: Date | null; opted_out: boolean | null }>(
      this.db,
      byNumber
        ? `SELECT last_inbound_at AS last, opted_out_at IS NOT NULL AS opted_out FROM contacts
           WHERE instance_id = $1 AND wa_id = $2`
        : `SELECT max(last_inbound_at) AS last, bool_or(opted_out_at IS NOT NULL) AS opted_out
           FROM contacts WHERE instance_id = $1 AND (user_id = $2 OR parent_user_id = $2)`,
      [instanceId, address],
    );
    return { last: contact?.last ?? null, optedOut: contact?.opted_out ?? false };
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
    // Contacts are locked in the one order (database/lock-order.ts), so batches
    // and sends sharing contacts wait for each other instead of deadlocking.
    // The lock is the one the update takes (no key changes): FOR UPDATE would
    // also wait on every message insert naming the contact (its foreign key
    // check), and made storing a backlog about a quarter slower.
    const ordered = [...identities].sort(
      (x, y) =>
        (x.waId ?? '').localeCompare(y.waId ?? '') ||
        (x.userId ?? '').localeCompare(y.userId ?? ''),
    );
    const byNumber = ordered.filter((i) => i.waId !== null && i.userId === null);
    if (byNumber.length > 0) {
      const known = await prepared<{ n: string; id: string }>(
        this.db,
        'contacts_known_numbers',
        `WITH i AS (
           SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[])
             WITH ORDINALITY AS i(wa_id, parent_user_id, username, name, at, n)
         ), known AS (
           SELECT i.*, c.id FROM i JOIN contacts c ON c.instance_id = $1 AND c.wa_id = i.wa_id
           ORDER BY ${contactOrder('c')} FOR NO KEY UPDATE OF c
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
    const others = ordered.filter((i) => !resolved.has(i.key));
    if (others.length === 0) return resolved;
    const found = await prepared<{ n: string; id: string }>(
      this.db,
      'contacts_resolve',
      `SELECT i.n, mc_resolve_contact($1, i.wa_id, i.user_id, i.parent_user_id, i.username, i.name, i.at) AS id
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
         WITH ORDINALITY AS i(wa_id, user_id, parent_user_id, username, name, at, n)
       -- By the contact that holds a key now (new ones last): the lock order.
       ORDER BY (SELECT c.id FROM contacts c WHERE c.instance_id = $1
                   AND (c.user_id = i.user_id OR c.wa_id = i.wa_id)
                 ORDER BY ${contactOrder('c')} LIMIT 1) NULLS LAST, i.n`,
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
      this.db,
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
      this.db,
      'SELECT wa_id, user_id, parent_user_id, username, name FROM contacts WHERE id = $1',
      [contactId],
    );
    return contact ?? null;
  }

  /**
   * One INSERT for a set of accepted sends. A number sent to becomes a
   * contact if it was not one; a user id is looked up (it may be a parent
   * id, shared by several). A status may have arrived first (webhooks race
   * the send's answer): then the placeholder row is completed, its status kept.
   */
  async insertOutbound(records: OutboundRow[]): Promise<void> {
    await this.db.query(
      `INSERT INTO messages (instance_id, wamid, direction, contact, contact_id, type, body, status,
         sent_by)
       SELECT r.instance_id, r.wamid, 'outbound', r.contact,
         CASE WHEN r.contact_id IS NOT NULL THEN r.contact_id
           WHEN r.by_number
           THEN mc_resolve_contact(r.instance_id, r.contact, NULL, NULL, NULL, NULL, NULL)
           ELSE (SELECT c.id FROM contacts c
                 WHERE c.instance_id = r.instance_id
                   AND (c.user_id = r.contact OR c.parent_user_id = r.contact)
                 ORDER BY c.user_id = r.contact DESC LIMIT 1)
         END,
         r.type, r.body, 'sent', r.sent_by
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::boolean[], $5::text[], $6::jsonb[],
                   $7::uuid[], $8::text[])
         AS r(instance_id, wamid, contact, by_number, type, body, contact_id, sent_by)
       ON CONFLICT (wamid) DO UPDATE SET
         instance_id = EXCLUDED.instance_id, direction = EXCLUDED.direction,
         contact = EXCLUDED.contact, contact_id = EXCLUDED.contact_id, type = EXCLUDED.type,
         body = EXCLUDED.body, sent_by = EXCLUDED.sent_by, updated_at = now()`,
      [
        records.map((r) => r.instanceId),
        records.map((r) => r.wamid),
        records.map((r) => r.address),
        records.map((r) => r.byNumber),
        records.map((r) => r.type),
        records.map((r) => JSON.stringify(r.body)),
        records.map((r) => r.contactId ?? null),
        records.map((r) => r.sentBy),
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

  /** A page of the contacts with messages waiting, by contact id, with their spans. */
  awaitingBuffers(
    after: string | null,
    limit: number,
  ): Promise<Array<{ instance_id: string; contact_id: string; first: Date; last: Date }>> {
    return rows(
      this.db,
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
      this.db,
      `SELECT extract(epoch FROM now() - min(received_at))::float8 AS age
       FROM messages WHERE awaiting_turn`,
    );
    return Math.max(0, oldest?.age ?? 0);
  }

  /** A turn's messages as the platform sent them: by timestamp, then arrival. */
  async ofTurn(turnId: string): Promise<InboundMessage[]> {
    const found = await rows<{ body: InboundMessage }>(
      this.db,
      `SELECT body FROM messages WHERE turn_id = $1 ORDER BY created_at, received_at, seq`,
      [turnId],
    );
    return found.map((row) => row.body);
  }

  /** A stored message with its contact's keys; null when the instance has none by that wamid. */
  async find(instanceId: string, wamid: string): Promise<StoredMessage | null> {
    const [message] = await rows<StoredMessage>(
      this.db,
      `SELECT m.*, c.wa_id AS contact_wa_id, c.user_id AS contact_user_id
       FROM messages m LEFT JOIN contacts c ON c.id = m.contact_id
       WHERE m.instance_id = $1 AND m.wamid = $2`,
      [instanceId, wamid],
    );
    return message ?? null;
  }

  /**
   * Inserts the new inbound messages (a wamid already stored is skipped) and
   * tells, per contact, how many it stored and whether they started its
   * buffer: the statement's snapshot does not see the rows it inserts, so a
   * waiting message it sees was there before. With `awaitTurn` false (no
   * agent), messages are stored without waiting for a turn; so are those of
   * a contact in handoff or opted out, and those marked not to be answered.
   */
  insertInbound(
    instanceId: string,
    awaitTurn: boolean,
    messages: InboundRow[],
  ): Promise<InsertedInbound[]> {
    return prepared<InsertedInbound>(
      this.db,
      'inbound_messages',
      `WITH inserted AS (
         INSERT INTO messages (instance_id, wamid, direction, contact, contact_id, type, body,
           status, created_at, received_at, awaiting_turn)
         SELECT $1, m.wamid, 'inbound', m.contact, m.contact_id, m.type, m.body, 'received',
           m.sent_at, m.received_at,
           $2 AND m.type <> 'system' AND m.answer
             AND NOT EXISTS (SELECT 1 FROM contacts c WHERE c.id = m.contact_id
                             AND (c.handoff_until > now() OR c.opted_out_at IS NOT NULL))
         FROM unnest($3::text[], $4::text[], $5::uuid[], $6::text[], $7::jsonb[],
                     $8::timestamptz[], $9::timestamptz[], $10::boolean[])
           WITH ORDINALITY AS m(wamid, contact, contact_id, type, body, sent_at, received_at, answer, n)
         ORDER BY m.n
         ON CONFLICT (wamid) DO NOTHING
         RETURNING contact_id, received_at, awaiting_turn, wamid
       )
       SELECT i.contact_id, count(*)::int AS stored,
         array_agg(i.wamid) FILTER (WHERE i.wamid = ANY($11::text[])) AS words,
         min(i.received_at) FILTER (WHERE i.awaiting_turn) AS first,
         max(i.received_at) FILTER (WHERE i.awaiting_turn) AS last,
         EXISTS (SELECT 1 FROM messages w
                 WHERE w.awaiting_turn AND w.contact_id = i.contact_id) AS waited
       FROM inserted i GROUP BY i.contact_id`,
      [
        instanceId,
        awaitTurn,
        messages.map((m) => m.wamid),
        messages.map((m) => m.address),
        messages.map((m) => m.contactId),
        messages.map((m) => m.type),
        messages.map((m) => m.body),
        messages.map((m) => m.sentAt),
        messages.map((m) => m.receivedAt),
        messages.map((m) => m.answer ?? true),
        messages.filter((m) => m.answer === false).map((m) => m.wamid),
      ],
    );
  }

  /**
   * Applies delivery statuses to the stored messages, never backwards. A
   * status for a wamid not stored yet (it can arrive before the send's
   * answer) is kept on a placeholder row that the send then completes.
   */
  async applyStatuses(instanceId: string, statuses: StatusRow[]): Promise<void> {
    await prepared(
      this.db,
      'inbound_statuses',
      `INSERT INTO messages (instance_id, wamid, direction, contact, type, body, status, errors)
       SELECT $1, s.wamid, 'outbound', s.recipient, 'unknown', '{}'::jsonb, s.status, s.errors
       FROM unnest($2::text[], $3::text[], $4::text[], $5::jsonb[]) AS s(wamid, recipient, status, errors)
       ON CONFLICT (wamid) DO UPDATE SET
         status = EXCLUDED.status,
         errors = COALESCE(EXCLUDED.errors, messages.errors),
         updated_at = now()
       WHERE ${STATUS_RANK_SQL('messages.status')} < ${STATUS_RANK_SQL('EXCLUDED.status')}`,
      [
        instanceId,
        statuses.map((s) => s.wamid),
        statuses.map((s) => s.recipient),
        statuses.map((s) => s.status),
        statuses.map((s) => s.errors),
      ],
    );
  }

  /** An instance's contact by number (digits) or user id; null when unknown. */
  async contactByKey(instanceId: string, key: string): Promise<Contact | null> {
    const [contact] = await rows<Contact>(
      this.db,
      /^\d+$/.test(key)
        ? 'SELECT * FROM contacts WHERE instance_id = $1 AND wa_id = $2'
        : 'SELECT * FROM contacts WHERE instance_id = $1 AND user_id = $2',
      [instanceId, key],
    );
    return contact ?? null;
  }

  /**
   * A page of an instance's contacts, newest activity first, after the
   * position `after` ([last activity, id]); `search` is a number prefix
   * (digits) or a name prefix. `activity` is the last activity in microseconds.
   */
  listContacts(
    instanceId: string,
    search: string | undefined,
    after: TimeIdPosition | null,
    limit: number,
  ): Promise<Array<Contact & { activity: string }>> {
    const prefix = search?.replace(/[\\%_]/g, (c) => `\\${c}`);
    return rows(
      this.db,
      `SELECT c.*, ${epochMicros('c.last_activity_at')} AS activity FROM contacts c
       WHERE c.instance_id = $1
         AND ($2::text IS NULL OR ($2 ~ '^[0-9]+$' AND c.wa_id LIKE $2 || '%')
              OR lower(c.name) LIKE lower($2) || '%')
         AND ($3::timestamptz IS NULL OR (c.last_activity_at, c.id) < ($3::timestamptz, $4::uuid))
       ORDER BY c.last_activity_at DESC, c.id DESC
       LIMIT $5`,
      [instanceId, prefix ?? null, after?.at ?? null, after?.id ?? null, limit],
    );
  }

  /**
   * A page of a contact's conversation in arrival order (ArrivalPosition):
   * the `limit` latest, or the `limit` before `before`, newest first, as the
   * statement's snapshot sees it; with the horizon to follow from.
   */
  async conversation(
    contactId: string,
    before: ArrivalPosition | null,
    limit: number,
  ): Promise<ConversationRead> {
    return this.readConversation(
      `($2::timestamp IS NULL
         OR (${ARRIVAL_SECOND}, m.received_at, m.seq) < ($2::timestamp, $3::timestamptz, $4::int8))
       ORDER BY ${ARRIVAL_SECOND} DESC, m.received_at DESC, m.seq DESC`,
      [
        contactId,
        // UTC without the zone: the key is a timestamp without time zone.
        before && isoFromEpochMicros(before.second * 1_000_000n).slice(0, -1),
        before && isoFromEpochMicros(before.receivedUs),
        before?.seq.toString() ?? null,
        limit,
      ],
    );
  }

  /**
   * The messages a contact's follower has not seen: those stored after
   * `after`, in the order they were stored, at most `limit`, and only below
   * the horizon: a transaction that took its position earlier but commits
   * later can never land behind a position handed out.
   */
  follow(contactId: string, after: StoredPosition, limit: number): Promise<ConversationRead> {
    return this.readConversation(
      `(m.stored_tx, m.seq) > ($2::xid8, $3::int8) AND m.stored_tx < h.xid
       ORDER BY m.stored_tx, m.seq`,
      [contactId, after.tx.toString(), after.seq.toString(), limit],
    );
  }

  /** The arrival position of a contact's message by `seq` (the cursors of earlier versions). */
  async arrivalOfSeq(contactId: string, seq: bigint): Promise<ArrivalPosition | null> {
    const [found] = await rows<{ created_us: string; received_us: string; seq: string }>(
      this.db,
      `SELECT ${epochMicros('created_at')} AS created_us, ${epochMicros('received_at')} AS received_us,
         seq::text FROM messages WHERE contact_id = $1 AND seq = $2`,
      [contactId, seq.toString()],
    );
    return found
      ? {
          second: BigInt(found.created_us) / 1_000_000n,
          receivedUs: BigInt(found.received_us),
          seq,
        }
      : null;
  }

  /**
   * A contact's messages that match `where` (it ends with an ORDER BY; `h.xid`
   * is the horizon), with the horizon of the statement's snapshot: below it
   * every transaction of this database has ended, so no message can still be
   * stored there. It is the oldest transaction in flight, or the next one to
   * start; a transaction another database runs cannot store a message here,
   * so it does not count when pg_stat_activity names its database (one it
   * does not name, e.g. for want of privilege, counts: later, not wrong).
   */
  private async readConversation(where: string, params: unknown[]): Promise<ConversationRead> {
    const found = await rows<{ horizon: string } & Partial<ConversationMessage>>(
      this.db,
      `WITH snap AS MATERIALIZED (SELECT pg_current_snapshot() AS s),
       elsewhere AS MATERIALIZED (
         SELECT backend_xid FROM pg_stat_activity
         WHERE backend_xid IS NOT NULL AND datname IS DISTINCT FROM current_database()
       ),
       h AS (
         SELECT COALESCE(
           (SELECT min(x) FROM snap, pg_snapshot_xip(snap.s) AS x
            WHERE xid(x) NOT IN (SELECT backend_xid FROM elsewhere)),
           (SELECT pg_snapshot_xmax(s) FROM snap)) AS xid
       )
       SELECT h.xid::text AS horizon, p.* FROM h LEFT JOIN LATERAL (
         SELECT m.*, ${epochMicros('m.created_at')} AS created_us,
           ${epochMicros('m.received_at')} AS received_us
         FROM messages m
         WHERE m.contact_id = $1 AND ${where}
         LIMIT $${params.length}
       ) p ON true`,
      params,
    );
    return {
      horizon: BigInt(found[0].horizon),
      messages: found.filter((row): row is typeof row & ConversationMessage => row.id != null),
    };
  }

  /**
   * Pauses the agent for a contact until `until` (a pause already running
   * keeps its start). Messages waiting for a turn wait no more: they are
   * the pending ones a hand-back may include. The contact, or null.
   */
  async startHandoff(
    contactId: string,
    until: Date,
    reason: string | null,
    by: HandoffBy,
  ): Promise<Contact | null> {
    const [contact] = await rows<Contact>(
      this.db,
      `WITH first_waiting AS (
         SELECT min(received_at) AS at FROM messages WHERE contact_id = $1 AND awaiting_turn
       ), paused AS (
         -- The pause covers the messages waiting now (a hand-back may include them). The
         -- agent asking for a person does not replace a person's own pause.
         UPDATE contacts SET handoff_until = $2, handoff_reason = $3, handoff_by = $4,
           handoff_since = CASE WHEN handoff_until > now() THEN handoff_since
                                ELSE LEAST(now(), (SELECT at FROM first_waiting)) END,
           updated_at = now()
         WHERE id = $1
           AND NOT ($4 = 'agent' AND COALESCE(handoff_until > now() AND handoff_by <> 'agent', false))
         RETURNING *
       ), waiting AS (
         UPDATE messages SET awaiting_turn = false WHERE contact_id = $1 AND awaiting_turn
       )
       SELECT * FROM paused`,
      [contactId, until, reason, by],
    );
    return contact ?? null;
  }

  /**
   * Hands a contact back to the agent. With `includePending`, the messages
   * that came during the pause (and were not answered) wait for a turn again.
   * The contact, and how many messages now wait.
   */
  async endHandoff(
    contactId: string,
    by: HandoffBy,
    includePending: boolean,
    notForTheAgent: string[],
  ): Promise<{ contact: Contact | null; pending: number }> {
    const [contact] = await rows<Contact & { pending: number }>(
      this.db,
      `WITH before AS (
         SELECT handoff_since, opted_out_at FROM contacts WHERE id = $1 -- as the pause left it
       ), resumed AS (
         UPDATE contacts SET handoff_until = NULL, handoff_by = $2, handoff_reason = NULL,
           updated_at = now()
         WHERE id = $1 RETURNING *
       ), pending AS (
         UPDATE messages m SET awaiting_turn = true
         FROM before
         WHERE $3 AND m.contact_id = $1 AND m.direction = 'inbound' AND m.turn_id IS NULL
           AND NOT m.awaiting_turn AND m.type <> 'system'
           AND m.received_at >= COALESCE(before.handoff_since, now())
           AND before.opted_out_at IS NULL
           -- Stop and start words are never questions for the agent.
           AND NOT (m.type = 'text' AND upper(btrim(m.body->'text'->>'body')) = ANY($4::text[]))
         RETURNING m.id
       )
       SELECT resumed.*, (SELECT count(*)::int FROM pending) AS pending FROM resumed`,
      [contactId, by, includePending, notForTheAgent],
    );
    return { contact: contact ?? null, pending: contact?.pending ?? 0 };
  }

  /**
   * A person's sends pause the agent for their contacts until at least
   * `seconds` after the send. A pause that already lasts that long (a
   * client's or an admin's longer one, or one written a moment ago) is left
   * as it is: never shortened. A pause is written `slackSeconds` longer, so a
   * chat rewrites it (a `contact.handoff` event) at most once per slack, not
   * per message. A running pause a client or an admin started stays theirs,
   * only longer; one the agent asked for becomes the person's.
   */
  async pauseForPeople(
    sends: Array<{ instanceId: string; address: string; byNumber: boolean }>,
    seconds: number,
    slackSeconds: number,
  ): Promise<void> {
    await this.db.query(
      `WITH paused AS (
       UPDATE contacts c SET handoff_until = GREATEST(c.handoff_until,
           now() + ($4::float8 + $5::float8) * interval '1 second'),
         handoff_since = CASE WHEN c.handoff_until > now() THEN c.handoff_since ELSE now() END,
         handoff_reason = CASE WHEN c.handoff_until > now() AND c.handoff_by IN ('api', 'admin')
                               THEN c.handoff_reason ELSE 'a person replied through the API' END,
         handoff_by = CASE WHEN c.handoff_until > now() AND c.handoff_by IN ('api', 'admin')
                           THEN c.handoff_by ELSE 'auto' END,
         updated_at = now()
       FROM unnest($1::uuid[], $2::text[], $3::boolean[]) AS s(instance_id, address, by_number)
       WHERE c.instance_id = s.instance_id
         AND (CASE WHEN s.by_number THEN c.wa_id = s.address ELSE c.user_id = s.address END)
         AND (c.handoff_until IS NULL OR c.handoff_until < now() + $4::float8 * interval '1 second'
              OR c.handoff_by = 'agent' AND c.handoff_until > now())
       RETURNING c.id
       )
       -- What waited for the agent waits no more: the person answers it.
       UPDATE messages m SET awaiting_turn = false
       FROM paused WHERE m.contact_id = paused.id AND m.awaiting_turn`,
      [
        sends.map((s) => s.instanceId),
        sends.map((s) => s.address),
        sends.map((s) => s.byNumber),
        seconds,
        slackSeconds,
      ],
    );
  }

  /**
   * What the agent's next reply part needs of its turn's contact, read as
   * it is sent: the contact (a merge may have moved the turn to another),
   * its keys now (a number or user id may have changed since the turn
   * began), and whether a person (not the agent) has it or it opted out, so
   * the agent says nothing. Null when the contact is gone.
   */
  async replyTarget(
    turnId: string,
  ): Promise<(ContactKeys & { id: string; paused: boolean }) | null> {
    const [contact] = await rows<ContactKeys & { id: string; paused: boolean }>(
      this.db,
      `SELECT c.id, c.wa_id, c.user_id, c.parent_user_id, c.username, c.name,
         COALESCE(c.handoff_until > now() AND c.handoff_by <> 'agent', false)
           OR c.opted_out_at IS NOT NULL AS paused
       FROM turns t JOIN contacts c ON c.id = t.contact_id WHERE t.id = $1`,
      [turnId],
    );
    return contact ?? null;
  }

  /**
   * Where an address (a number, or a user id) moved: the keys now of the
   * contact that had it before a number or user-id change. Null while a
   * contact still holds it (it is still good), or when none ever had it.
   */
  async movedKeys(
    instanceId: string,
    address: string,
    byNumber: boolean,
  ): Promise<Pick<ContactKeys, 'wa_id' | 'user_id'> | null> {
    const held = await rows(
      this.db,
      byNumber
        ? 'SELECT 1 FROM contacts WHERE instance_id = $1 AND wa_id = $2'
        : `SELECT 1 FROM contacts WHERE instance_id = $1
           AND (user_id = $2 OR parent_user_id = $2) LIMIT 1`,
      [instanceId, address],
    );
    if (held.length > 0) return null;
    // Rare (a retry after a change, or a number not written to yet): previous keys have no index.
    const [moved] = await rows<Pick<ContactKeys, 'wa_id' | 'user_id'>>(
      this.db,
      `SELECT wa_id, user_id FROM contacts
       WHERE instance_id = $1
         AND $2 = ANY(CASE WHEN $3 THEN previous_wa_ids ELSE previous_user_ids END)
       ORDER BY updated_at DESC LIMIT 1`,
      [instanceId, address, byNumber],
    );
    return moved ?? null;
  }

  /** Ends the pauses whose time is up (each a contact.handoff event); how many. */
  async endExpiredHandoffs(): Promise<number> {
    const ended = await rows(
      this.db,
      `UPDATE contacts SET handoff_until = NULL, handoff_by = 'timer',
         handoff_reason = 'the pause ended', updated_at = now()
       WHERE handoff_until <= now() RETURNING id`,
    );
    return ended.length;
  }

  /**
   * Opts contacts out (a stop word: their waiting messages wait no more) or
   * back in; the keys of those that changed.
   */
  async setOptOut(
    contactIds: string[],
    optedOut: boolean,
  ): Promise<Array<{ instance_id: string; wa_id: string | null; user_id: string | null }>> {
    if (contactIds.length === 0) return [];
    return rows(
      this.db,
      `WITH changed AS (
         UPDATE contacts SET opted_out_at = CASE WHEN $2 THEN now() END, updated_at = now()
         WHERE id = ANY($1::uuid[]) AND (opted_out_at IS NOT NULL) <> $2
         RETURNING id, instance_id, wa_id, user_id
       ), waiting AS (
         UPDATE messages SET awaiting_turn = false
         WHERE $2 AND contact_id = ANY($1::uuid[]) AND awaiting_turn
       )
       SELECT instance_id, wa_id, user_id FROM changed`,
      [contactIds, optedOut],
    );
  }
}
