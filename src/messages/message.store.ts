import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { isoFromEpochMicros } from '../common/epoch-micros.js';
import { epochMicros, prepared, rows, type Queryable } from '../database/sql.js';
import type { InboundMessage } from '../platform/webhook-payload.js';
import type { PersonRef } from '../accounts/account.types.js';
import {
  UNREAD_CAP,
  type ContactSummaries,
  type ContactSummary,
  type MessageLine,
} from '../contacts/contact-summaries.js';
import {
  STATUS_RANK,
  type AwaitingSpan,
  type Message,
  type ContextMessage,
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
  /** A person's send: who (see PersonRef). */
  person?: PersonRef | null;
  type: string;
  body: Record<string, unknown>;
  wamid: string;
  /** When it was sent, if not now (an echo's timestamp; never later than now). */
  sentAt?: Date;
}

/** What insertOutbound stored. */
export interface OutboundStored {
  /** The wamids recorded (new, or a placeholder completed). */
  wamids: string[];
  /**
   * Records that completed a row stored before them (a status's placeholder,
   * an echo that beat the send's record, an earlier try of the same record):
   * by wamid, its contact.
   */
  completed: Array<{ wamid: string; contact_id: string }>;
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
export type ConversationMessage = Message & {
  created_us: string;
  received_us: string;
  /** The state of the agent's turn it was given to (null: none). */
  turn_status: string | null;
  /** The message it replies to, when the conversation has it. */
  quoted: MessageLine | null;
};

/** Who sent message `alias`: outbound, its sender (a send recorded without one is the API's); inbound, null. */
const lineSender = (alias: string): string =>
  `CASE WHEN ${alias}.direction = 'outbound' THEN COALESCE(${alias}.sent_by, 'api') END`;

/** The text of message `alias` in a line: its text, caption or file name. */
const lineText = (alias: string): string =>
  `left(COALESCE(${alias}.body->'text'->>'body', ${alias}.body->>'body',
     ${alias}.body->${alias}.type->>'caption', ${alias}.body->>'caption',
     ${alias}.body->${alias}.type->>'filename', ${alias}.body->>'filename'), 120)`;

/**
 * A conversation's message `m`, its arrival position, its turn's state and
 * the message it quotes (inbound: the platform's `context.id`; outbound: the
 * send's `reply_to`), as ConversationMessage.
 */
const CONVERSATION_COLUMNS = `m.*, ${epochMicros('m.created_at')} AS created_us,
  ${epochMicros('m.received_at')} AS received_us, t.status AS turn_status,
  CASE WHEN q.wamid IS NULL THEN NULL ELSE jsonb_build_object(
    'wamid', q.wamid, 'direction', q.direction, 'type', q.type, 'text', q.text,
    'sent_by', q.sent_by) END AS quoted`;
const CONVERSATION_ROWS = `messages m LEFT JOIN turns t ON t.id = m.turn_id
  LEFT JOIN LATERAL (
    SELECT r.wamid, r.direction, r.type, ${lineText('r')} AS text,
      ${lineSender('r')} AS sent_by
    FROM messages r
    WHERE r.wamid = COALESCE(m.body->'context'->>'id', m.body->>'reply_to')
      AND r.contact_id = m.contact_id
  ) q ON true`;

/** A conversation read: its messages and the snapshot's horizon (see readConversation). */
export interface ConversationRead {
  messages: ConversationMessage[];
  horizon: bigint;
}

/** The sends insertOutbound records, as rows `r` of its parameters $1 to $11. */
const OUTBOUND_RECORDS = `unnest($1::uuid[], $2::text[], $3::text[], $4::boolean[], $5::text[],
    $6::jsonb[], $7::uuid[], $8::text[], $9::uuid[], $10::text[], $11::timestamptz[])
  WITH ORDINALITY AS r(instance_id, wamid, contact, by_number, type, body, contact_id, sent_by,
    account_id, account_name, sent_at, n)`;

/**
 * The contact of a send `r`: the one the sender knows, else by number (made
 * when new), else by user id (or a parent id several share: the user's own first).
 */
const OUTBOUND_CONTACT = `CASE WHEN r.contact_id IS NOT NULL THEN r.contact_id
    WHEN r.by_number
    THEN mc_resolve_contact(r.instance_id, r.contact, NULL, NULL, NULL, NULL, NULL, false)
    ELSE (SELECT c.id FROM contacts c
          WHERE c.instance_id = r.instance_id
            AND (c.user_id = r.contact OR c.parent_user_id = r.contact)
          ORDER BY c.user_id = r.contact DESC LIMIT 1)
  END`;

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
 * The SQL of `messages` (ContactStore has that of `contacts`). A message names
 * its contact: an inbound one is stored after its contact is resolved, waits
 * for a turn unless its contact is paused or opted out, and a send to a new
 * number makes it a contact (mc_resolve_contact, in contact.functions.sql.ts).
 * What a row written does in the database (its events, the contact's last
 * send) is in message.triggers.sql.ts.
 */
@Injectable()
export class MessageStore implements ContactSummaries {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }

  /**
   * Records a set of accepted sends. A number sent to becomes a contact if it
   * was not one; a user id is looked up (it may be a parent id, shared by
   * several). A status may have arrived first (webhooks race the send's
   * answer): then the placeholder row is completed, its status kept.
   *
   * New rows and completed placeholders are two statements, not one INSERT …
   * ON CONFLICT DO UPDATE: such a statement fires the update's trigger and then
   * the insert's, each locking its contacts and lanes in order, so the
   * statement as a whole would not keep the lock order (database/lock-order.ts).
   */
  async insertOutbound(
    records: OutboundRow[],
    /** Echoes: an existing message is completed only when it is a status's placeholder. */
    options: { placeholdersOnly?: boolean } = {},
  ): Promise<OutboundStored> {
    const columns = (batch: OutboundRow[]) => [
      batch.map((r) => r.instanceId),
      batch.map((r) => r.wamid),
      batch.map((r) => r.address),
      batch.map((r) => r.byNumber),
      batch.map((r) => r.type),
      batch.map((r) => JSON.stringify(r.body)),
      batch.map((r) => r.contactId ?? null),
      batch.map((r) => r.sentBy),
      batch.map((r) => r.person?.accountId ?? null),
      batch.map((r) => r.person?.displayName ?? null),
      batch.map((r) => r.sentAt?.toISOString() ?? null),
    ];
    const inserted = await rows<{ wamid: string }>(
      this.db,
      `INSERT INTO messages (instance_id, wamid, direction, contact, contact_id, type, body, status,
         sent_by, sent_by_account_id, sent_by_account_name, created_at)
       SELECT r.instance_id, r.wamid, 'outbound', r.contact, ${OUTBOUND_CONTACT}, r.type, r.body,
         'sent', r.sent_by, r.account_id, r.account_name, LEAST(COALESCE(r.sent_at, now()), now())
       FROM ${OUTBOUND_RECORDS}
       -- New numbers become contacts in one order (by key: no two batches wait on each
       -- other's new keys); each contact's sends keep the order they were recorded in (seq).
       ORDER BY r.instance_id, r.contact, r.n
       ON CONFLICT (wamid) DO NOTHING
       RETURNING wamid`,
      columns(records),
    );
    const done = new Set(inserted.map((row) => row.wamid));
    if (inserted.length === records.length) return { wamids: [...done], completed: [] };
    const completed = await rows<{ wamid: string; contact_id: string | null }>(
      this.db,
      `UPDATE messages m SET instance_id = r.instance_id, direction = 'outbound',
         contact = r.contact, contact_id = ${OUTBOUND_CONTACT}, type = r.type, body = r.body,
         sent_by = r.sent_by, sent_by_account_id = r.account_id,
         sent_by_account_name = r.account_name, updated_at = now()
       FROM ${OUTBOUND_RECORDS}
       WHERE m.wamid = r.wamid AND (NOT $12::boolean OR m.type = 'unknown')
       RETURNING m.wamid, m.contact_id`,
      [...columns(records.filter((r) => !done.has(r.wamid))), options.placeholdersOnly ?? false],
    );
    return {
      wamids: [...done, ...completed.map((row) => row.wamid)],
      completed: completed.flatMap(({ wamid, contact_id }) =>
        contact_id === null ? [] : [{ wamid, contact_id }],
      ),
    };
  }

  /**
   * Stores imported history (a number shared with the phone app): each
   * message once, marked `imported`, never waiting for a turn, no message
   * event (the triggers pass over it). How many were new.
   */
  async insertImported(
    instanceId: string,
    messages: Array<{
      wamid: string;
      direction: 'inbound' | 'outbound';
      contact: string;
      contactId: string;
      type: string;
      body: Record<string, unknown>;
      status: string;
      sentAt: Date;
    }>,
    /** A transaction's manager (HistoryStore.importChunk's), else the data source. */
    db: Queryable = this.db,
  ): Promise<number> {
    if (messages.length === 0) return 0;
    const inserted = await rows<{ wamid: string }>(
      db,
      `INSERT INTO messages (instance_id, wamid, direction, contact, contact_id, type, body,
         status, sent_by, created_at, received_at, awaiting_turn, imported)
       SELECT $1, m.wamid, m.direction, m.contact, m.contact_id, m.type, m.body, m.status,
         CASE WHEN m.direction = 'outbound' THEN 'phone_app' END, m.sent_at, now(), false, true
       FROM unnest($2::text[], $3::text[], $4::text[], $5::uuid[], $6::text[], $7::jsonb[],
                   $8::text[], $9::timestamptz[])
         WITH ORDINALITY AS m(wamid, direction, contact, contact_id, type, body, status, sent_at, n)
       ORDER BY m.n
       ON CONFLICT (wamid) DO NOTHING
       RETURNING wamid`,
      [
        instanceId,
        messages.map((m) => m.wamid),
        messages.map((m) => m.direction),
        messages.map((m) => m.contact),
        messages.map((m) => m.contactId),
        messages.map((m) => m.type),
        messages.map((m) => JSON.stringify(m.body)),
        messages.map((m) => m.status),
        messages.map((m) => m.sentAt),
      ],
    );
    return inserted.length;
  }

  /**
   * The conversation before a turn: the contact's last `limit` messages
   * stored before the turn's first one (by arrival: the platform's second,
   * then arrival, then storage order), both directions, imported history
   * included, oldest first. The turn's own messages and status placeholders
   * are left out.
   */
  async contextBefore(contactId: string, turnId: string, limit: number): Promise<ContextMessage[]> {
    if (limit <= 0) return [];
    return rows<ContextMessage>(
      this.db,
      `WITH first AS (
         SELECT date_trunc('second', created_at AT TIME ZONE 'UTC') AS second, received_at, seq
         FROM messages WHERE turn_id = $2
         ORDER BY 1, 2, 3 LIMIT 1)
       SELECT * FROM (
         SELECT m.wamid, m.direction, m.type, m.body, m.status, m.errors, m.sent_by,
           m.sent_by_account_name, m.imported, m.created_at, ${lineText('m')} AS text,
           date_trunc('second', m.created_at AT TIME ZONE 'UTC') AS second, m.received_at,
           m.seq AS position
         FROM messages m, first
         WHERE m.contact_id = $1 AND m.type <> 'unknown'
           AND (m.turn_id IS DISTINCT FROM $2)
           AND (date_trunc('second', m.created_at AT TIME ZONE 'UTC'), m.received_at, m.seq)
             < (first.second, first.received_at, first.seq)
         ORDER BY date_trunc('second', m.created_at AT TIME ZONE 'UTC') DESC,
           m.received_at DESC, m.seq DESC
         LIMIT $3) c
       ORDER BY c.second, c.received_at, c.position`,
      [contactId, turnId, limit],
    );
  }

  /** Of these wamids, those stored as sent from the phone app (echoes, new or not). */
  async phoneAppEchoes(instanceId: string, wamids: string[]): Promise<string[]> {
    const found = await rows<{ wamid: string }>(
      this.db,
      `SELECT wamid FROM messages
       WHERE instance_id = $1 AND wamid = ANY($2::text[]) AND sent_by = 'phone_app'`,
      [instanceId, wamids],
    );
    return found.map((row) => row.wamid);
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

  /**
   * What an inbox's list shows of each contact: its inbound messages stored
   * after the one a person last read to (`read_tx`, `read_seq`; at most
   * UNREAD_CAP are counted) and its last message, in arrival order, with a line of its text.
   */
  async contactSummaries(contactIds: string[]): Promise<Map<string, ContactSummary>> {
    const found = await rows<ContactSummary & { contact_id: string }>(
      this.db,
      `SELECT c.id AS contact_id,
         (SELECT count(*)::int FROM (
            SELECT 1 FROM messages m
            WHERE m.contact_id = c.id
              AND (m.stored_tx, m.seq) > (COALESCE(c.read_tx, '0'::xid8), COALESCE(c.read_seq, 0))
              AND m.direction = 'inbound' AND m.type <> 'unknown' AND NOT m.imported
            LIMIT ${UNREAD_CAP}) u) AS unread,
         CASE WHEN l.wamid IS NULL THEN NULL ELSE jsonb_build_object(
           'wamid', l.wamid, 'direction', l.direction, 'type', l.type, 'text', l.text,
           'sent_by', l.sent_by, 'created_at', mc_iso(l.created_at)) END AS last_message
       FROM contacts c
       LEFT JOIN LATERAL (
         SELECT m.wamid, m.direction, m.type, m.created_at,
           ${lineSender('m')} AS sent_by,
           ${lineText('m')} AS text
         FROM messages m
         WHERE m.contact_id = c.id AND m.type <> 'unknown'
         ORDER BY ${ARRIVAL_SECOND} DESC, m.received_at DESC, m.seq DESC
         LIMIT 1
       ) l ON true
       WHERE c.id = ANY($1::uuid[])`,
      [contactIds],
    );
    return new Map(found.map(({ contact_id, ...summary }) => [contact_id, summary]));
  }

  /** How many messages wait for a turn, and the age in seconds of the oldest (0 when none waits). */
  async awaitingSummary(): Promise<{ count: number; oldestAgeSeconds: number }> {
    const [summary] = await rows<{ count: number; age: number | null }>(
      this.db,
      `SELECT count(*)::int AS count, extract(epoch FROM now() - min(received_at))::float8 AS age
       FROM messages WHERE awaiting_turn`,
    );
    return { count: summary.count, oldestAgeSeconds: Math.max(0, summary.age ?? 0) };
  }

  /** How many messages were sent (recorded outbound) in the last `seconds`. */
  async sentWithin(seconds: number): Promise<number> {
    const [sent] = await rows<{ count: number }>(
      this.db,
      `SELECT count(*)::int AS count FROM messages
       WHERE direction = 'outbound' AND type <> 'unknown'
         AND created_at > now() - make_interval(secs => $1)`,
      [seconds],
    );
    return sent.count;
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

  /**
   * The template message a turn's customer is answering: the one a message
   * of the turn quotes (`quoted`: a button's reply names it), else the last
   * the contact got in the 24 hours up to the turn's first message (a
   * message's time is the platform's, in whole seconds: a template of that
   * second counts as before it). Null when there is none.
   */
  async templateBefore(
    contactId: string,
    turnId: string,
    quoted: string[] = [],
  ): Promise<{
    wamid: string;
    template_name: string;
    language: string | null;
    sent_at: Date;
  } | null> {
    const [found] = await rows<{
      wamid: string;
      template_name: string;
      language: string | null;
      sent_at: Date;
    }>(
      this.db,
      // The contact's messages by arrival second: ix_messages_contact_arrival reads one day of them.
      `WITH first AS (
         SELECT date_trunc('second', min(created_at) AT TIME ZONE 'UTC') AS at
         FROM messages WHERE turn_id = $2)
       SELECT wamid, template_name, language, sent_at FROM (
         (SELECT m.wamid, m.body->>'template_name' AS template_name,
            m.body->>'language' AS language, m.created_at AS sent_at, 0 AS rank
          FROM messages m
          WHERE m.contact_id = $1 AND m.wamid = ANY($3::text[])
            AND m.direction = 'outbound' AND m.type = 'template'
          LIMIT 1)
         UNION ALL
         (SELECT m.wamid, m.body->>'template_name', m.body->>'language', m.created_at, 1
          FROM messages m, first
          WHERE m.contact_id = $1
            AND date_trunc('second', m.created_at AT TIME ZONE 'UTC')
              BETWEEN first.at - interval '24 hours' AND first.at
            AND m.direction = 'outbound' AND m.type = 'template'
          ORDER BY date_trunc('second', m.created_at AT TIME ZONE 'UTC') DESC,
            m.received_at DESC, m.seq DESC
          LIMIT 1)) found
       ORDER BY rank LIMIT 1`,
      [contactId, turnId, quoted],
    );
    return found?.template_name ? found : null;
  }

  /** Messages by id, as a conversation reads them: what a live stream says changed. */
  conversationMessages(ids: string[]): Promise<ConversationMessage[]> {
    return rows<ConversationMessage>(
      this.db,
      `SELECT ${CONVERSATION_COLUMNS} FROM ${CONVERSATION_ROWS} WHERE m.id = ANY($1::uuid[])`,
      [ids],
    );
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
   * Placeholders first, then the statuses of the others: two statements, for
   * the lock order (see insertOutbound). A wamid stored meanwhile by a send
   * was not inserted here, so the second statement finds it.
   */
  async applyStatuses(instanceId: string, statuses: StatusRow[]): Promise<void> {
    const placed = await prepared<{ wamid: string }>(
      this.db,
      'inbound_status_placeholders',
      `INSERT INTO messages (instance_id, wamid, direction, contact, type, body, status, errors)
       SELECT $1, s.wamid, 'outbound', s.recipient, 'unknown', '{}'::jsonb, s.status, s.errors
       FROM unnest($2::text[], $3::text[], $4::text[], $5::jsonb[]) AS s(wamid, recipient, status, errors)
       ON CONFLICT (wamid) DO NOTHING
       RETURNING wamid`,
      [
        instanceId,
        statuses.map((s) => s.wamid),
        statuses.map((s) => s.recipient),
        statuses.map((s) => s.status),
        statuses.map((s) => s.errors),
      ],
    );
    if (placed.length === statuses.length) return;
    const done = new Set(placed.map((row) => row.wamid));
    const stored = statuses.filter((s) => !done.has(s.wamid));
    await prepared(
      this.db,
      'inbound_statuses',
      `UPDATE messages m SET status = s.status, errors = COALESCE(s.errors, m.errors),
         updated_at = now()
       FROM unnest($1::text[], $2::text[], $3::jsonb[]) AS s(wamid, status, errors)
       WHERE m.wamid = s.wamid
         AND ${STATUS_RANK_SQL('m.status')} < ${STATUS_RANK_SQL('s.status')}`,
      [stored.map((s) => s.wamid), stored.map((s) => s.status), stored.map((s) => s.errors)],
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
         SELECT ${CONVERSATION_COLUMNS} FROM ${CONVERSATION_ROWS}
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
}
