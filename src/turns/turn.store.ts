import type { TimeIdCursor, TimeIdPosition } from '../common/time-id-cursor.js';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { epochMicros, prepared, rows, sqlState, UNIQUE_VIOLATION } from '../database/sql.js';
import type { ContactKeys } from '../contacts/contact.types.js';
import type { AwaitingSpan } from '../messages/message.types.js';
import type { InboundMessage } from '../platform/webhook-payload.js';
import { bufferDueSql, type BufferTiming } from './buffer/buffer-due.js';
import {
  OPEN_TURN_STATES_SQL,
  type FinalTurnState,
  type NewTurnPart,
  type PartState,
  type QueuedTurnPart,
  type TurnPartRow,
  type TurnRow,
  type TurnState,
} from './turn-states.js';

/** What a claim took: the turn, its messages in order, and its contact's keys. */
export interface ClaimedTurn {
  kind: 'claimed';
  turnId: string;
  messages: InboundMessage[];
  contact: ContactKeys;
}

export type ClaimResult =
  /** A new turn took the contact's waiting messages (its first agent call counted). */
  | ClaimedTurn
  /** The contact already has an open turn; its waiting messages go in the next one. */
  | { kind: 'busy'; turnId: string }
  /** The buffer is due later (messages came after the flush was armed, or the workers are behind). */
  | { kind: 'not_due'; awaiting: AwaitingSpan }
  /** Nothing waits. */
  | { kind: 'empty' };

export interface ClaimOptions {
  leaseMs: number;
  /** How long the agent may be tried. */
  agentHorizonMs: number;
  /** The buffer must be due by then. */
  dueBy: Date;
  /** MESSAGE_BUFFER_DELAY in ms; null: quiet gaps do not count (the workers are behind). */
  delayMs: number | null;
  /** MESSAGE_BUFFER_MAX_WAIT in ms. */
  maxWaitMs: number;
}

/** When a turn ends: whether this worker ended it, and what of the contact's waits now. */
export interface Ended {
  ended: boolean;
  awaiting: AwaitingSpan | null;
}

export interface TurnFilter {
  status?: TurnState;
  instanceId?: string;
  /** A number or a user id: the turns of the contact known by it. */
  contact?: string;
}

/** A turn with the keys and profile of its contact, for operators. */
export interface TurnWithContact extends TurnRow {
  contact_wa_id: string | null;
  contact_user_id: string | null;
  contact_username: string | null;
  contact_name: string | null;
}

export interface TurnPage {
  turns: Array<TurnWithContact & { cursor: TimeIdCursor }>;
  hasMore: boolean;
}

const WITH_CONTACT = `SELECT t.*, c.wa_id AS contact_wa_id, c.user_id AS contact_user_id,
    c.username AS contact_username, c.name AS contact_name
  FROM turns t JOIN contacts c ON c.id = t.contact_id`;

export type ReopenResult =
  { kind: 'reopened'; turn: TurnRow } | { kind: 'not_failed' } | { kind: 'busy'; turnId: string };

const LEASE = `now() + $3::float8 * interval '1 millisecond'`;

/** When the claimed contact's buffer is due (a null delay: behind a backlog, the max wait only). */
const CLAIM_DUE = bufferDueSql({
  first: 'first',
  last: 'last',
  delayMs: '$8::float8',
  maxWaitMs: '$9::float8',
});

/** The only home of the SQL of turns and their reply parts (see turn-states.ts). */
@Injectable()
export class TurnStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Opens a turn for the contact's waiting messages under `owner`'s lease and
   * counts its first agent call, in one statement that also returns the
   * messages (in order) and the contact. Only a due buffer is taken: one
   * whose last message is `delayMs` old, or its first `maxWaitMs`, by
   * `dueBy` (a null delay never passes; the rule: buffer/buffer-due.ts). The
   * partial unique index on open turns lets one turn per contact exist, so
   * two workers flushing at once cannot both claim; while one is open, the
   * contact's new messages wait.
   */
  async claim(
    turnId: string,
    instanceId: string,
    contactId: string,
    owner: string,
    options: ClaimOptions,
  ): Promise<ClaimResult> {
    const [row] = await prepared<{
      claimed: string | null;
      open: string | null;
      first: Date | null;
      last: Date | null;
      messages: InboundMessage[] | null;
      contact: ContactKeys | null;
    }>(
      this.db,
      'turn_claim',
      `WITH waiting AS (
         SELECT min(received_at) AS first, max(received_at) AS last FROM messages
         WHERE awaiting_turn AND contact_id = $3
       ), opened AS (
         INSERT INTO turns (id, instance_id, contact_id, status, attempts, agent_deadline,
                            lease_owner, lease_until)
         SELECT $1, $2, $3, 'calling', 1, now() + $6::float8 * interval '1 millisecond',
                $4, now() + $5::float8 * interval '1 millisecond'
         FROM waiting
         WHERE ${CLAIM_DUE} <= $7
         ON CONFLICT (contact_id) WHERE status IN ${OPEN_TURN_STATES_SQL} DO NOTHING
         RETURNING id
       ), taken AS (
         UPDATE messages SET turn_id = $1, awaiting_turn = false, updated_at = now()
         WHERE awaiting_turn AND contact_id = $3 AND EXISTS (SELECT 1 FROM opened)
         RETURNING body, created_at, received_at, seq
       )
       SELECT (SELECT id FROM opened) AS claimed,
         (SELECT id FROM turns WHERE contact_id = $3 AND status IN ${OPEN_TURN_STATES_SQL}) AS open,
         waiting.first, waiting.last,
         (SELECT json_agg(body ORDER BY created_at, received_at, seq) FROM taken) AS messages,
         (SELECT row_to_json(c) FROM (SELECT wa_id, user_id, parent_user_id, username, name
                                      FROM contacts WHERE id = $3) c) AS contact
       FROM waiting`,
      [
        turnId,
        instanceId,
        contactId,
        owner,
        options.leaseMs,
        options.agentHorizonMs,
        options.dueBy,
        options.delayMs,
        options.maxWaitMs,
      ],
    );
    if (row?.claimed && row.messages?.length && row.contact) {
      return { kind: 'claimed', turnId: row.claimed, messages: row.messages, contact: row.contact };
    }
    // The snapshot saw the open turn as it was before this statement.
    if (row?.open) return { kind: 'busy', turnId: row.open };
    if (row?.first && row.last) {
      return { kind: 'not_due', awaiting: { first: row.first, last: row.last } };
    }
    return { kind: 'empty' };
  }

  /**
   * Takes the lease of an open turn when it is free (never held, expired, or
   * already `owner`'s) and no retry is pending (a wake-up up to a second
   * early counts as due: clocks differ); null when another worker holds it,
   * a retry waits, or the turn has ended.
   */
  async acquire(turnId: string, owner: string, leaseMs: number): Promise<TurnRow | null> {
    const [turn] = await rows<TurnRow>(
      this.db,
      `UPDATE turns SET lease_owner = $2, lease_until = ${LEASE}, updated_at = now()
       WHERE id = $1 AND status IN ${OPEN_TURN_STATES_SQL}
         AND (lease_owner IS NULL OR lease_owner = $2 OR lease_until < now())
         AND (next_attempt_at IS NULL OR next_attempt_at <= now() + interval '1 second')
       RETURNING *`,
      [turnId, owner, leaseMs],
    );
    return turn ?? null;
  }

  /** Extends the lease; false when it is no longer `owner`'s (another worker took the turn over). */
  async renew(turnId: string, owner: string, leaseMs: number): Promise<boolean> {
    const renewed = await rows(
      this.db,
      `UPDATE turns SET lease_until = ${LEASE}
       WHERE id = $1 AND lease_owner = $2 AND status IN ${OPEN_TURN_STATES_SQL}
       RETURNING id`,
      [turnId, owner, leaseMs],
    );
    return renewed.length > 0;
  }

  /** Lets the lease go early (the worker stops without finishing), so another can resume at once. */
  async release(turnId: string, owner: string): Promise<void> {
    await this.db.query(
      `UPDATE turns SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2`,
      [turnId, owner],
    );
  }

  /** Counts an agent call about to be made; the first one sets the retry horizon. */
  async startAgentAttempt(
    turnId: string,
    owner: string,
    horizonMs: number,
  ): Promise<TurnRow | null> {
    const [turn] = await rows<TurnRow>(
      this.db,
      `UPDATE turns SET status = 'calling', attempts = attempts + 1, next_attempt_at = NULL,
         agent_deadline = COALESCE(agent_deadline, now() + $3::float8 * interval '1 millisecond'),
         updated_at = now()
       WHERE id = $1 AND lease_owner = $2 AND status IN ('claimed', 'calling')
       RETURNING *`,
      [turnId, owner, horizonMs],
    );
    return turn ?? null;
  }

  /**
   * Stores the agent's answer and its parts, in one statement. With parts to
   * send the turn goes on to `sending` (its reply retry horizon set); with
   * none it is done at once. False when the lease was lost.
   */
  async storeAnswer(
    turnId: string,
    owner: string,
    answer: unknown,
    parts: NewTurnPart[],
    replyHorizonMs: number,
  ): Promise<Ended & { stored: boolean }> {
    const toSend = parts.some((part) => part.status === 'queued');
    const [row] = await prepared<{ stored: boolean; first: Date | null; last: Date | null }>(
      this.db,
      'turn_store_answer',
      `WITH stored AS (
         UPDATE turns SET answer = $3::jsonb, status = $4::text, last_error = NULL,
           updated_at = now(),
           reply_deadline = CASE WHEN $4::text = 'sending'
             THEN now() + $10::float8 * interval '1 millisecond' END,
           completed_at = CASE WHEN $4::text = 'done' THEN now() END,
           lease_owner = CASE WHEN $4::text = 'done' THEN NULL ELSE lease_owner END,
           lease_until = CASE WHEN $4::text = 'done' THEN NULL ELSE lease_until END
         WHERE id = $1 AND lease_owner = $2 AND status = 'calling'
         RETURNING id, contact_id
       ), parts AS (
         INSERT INTO turn_parts (turn_id, position, kind, body, status, error)
         SELECT $1, p.position, p.kind, p.body, p.status, p.error
         FROM unnest($5::int[], $6::text[], $7::jsonb[], $8::text[], $9::text[])
           AS p(position, kind, body, status, error)
         WHERE EXISTS (SELECT 1 FROM stored)
       )
       SELECT EXISTS (SELECT 1 FROM stored) AS stored, w.first, w.last
       FROM (SELECT min(m.received_at) AS first, max(m.received_at) AS last
             FROM messages m JOIN stored s ON m.contact_id = s.contact_id
             WHERE m.awaiting_turn) w`,
      [
        turnId,
        owner,
        JSON.stringify(answer ?? null),
        toSend ? 'sending' : 'done',
        parts.map((_, index) => index),
        parts.map((part) => part.kind),
        parts.map((part) => JSON.stringify(part.body)),
        parts.map((part) => part.status),
        parts.map((part) => (part.status === 'skipped' ? part.error : null)),
        replyHorizonMs,
      ],
    );
    return {
      stored: row?.stored ?? false,
      ended: (row?.stored ?? false) && !toSend,
      awaiting: row?.first && row.last ? { first: row.first, last: row.last } : null,
    };
  }

  /** Releases the turn until `delayMs` from now, when a delayed job (or the sweeper) resumes it. */
  async waitForRetry(
    turnId: string,
    owner: string,
    delayMs: number,
    error: string,
  ): Promise<boolean> {
    const updated = await rows(
      this.db,
      `UPDATE turns SET next_attempt_at = now() + $3::float8 * interval '1 millisecond', last_error = $4,
         lease_owner = NULL, lease_until = NULL, updated_at = now()
       WHERE id = $1 AND lease_owner = $2 AND status IN ${OPEN_TURN_STATES_SQL}
       RETURNING id`,
      [turnId, owner, delayMs, error],
    );
    return updated.length > 0;
  }

  /**
   * Releases a turn that found its instance's agent calls all in use: due at
   * once (a released slot wakes it; the sweeper too, should that be lost),
   * with `note` as the reason it waits. `counted`: its claim counted a call
   * that was not made, which is taken back.
   */
  async waitForSlot(
    turnId: string,
    owner: string,
    counted: boolean,
    note: string,
  ): Promise<boolean> {
    const updated = await rows(
      this.db,
      `UPDATE turns SET next_attempt_at = now(), last_error = $4,
         attempts = attempts - CASE WHEN $3::boolean THEN 1 ELSE 0 END,
         lease_owner = NULL, lease_until = NULL, updated_at = now()
       WHERE id = $1 AND lease_owner = $2 AND status IN ('claimed', 'calling')
       RETURNING id`,
      [turnId, owner, counted, note],
    );
    return updated.length > 0;
  }

  /**
   * Ends the turn (lease released), settling its last part as sent first
   * when given; and says when the contact's messages waiting meanwhile arrived.
   */
  async finish(
    turnId: string,
    owner: string,
    status: FinalTurnState,
    error: string | null,
    sentPart?: { position: number; wamid: string },
  ): Promise<Ended> {
    const [row] = await prepared<{ ended: boolean; first: Date | null; last: Date | null }>(
      this.db,
      'turn_finish',
      `WITH part AS (
         UPDATE turn_parts SET status = 'sent', wamid = $6, attempts = attempts + 1,
           error = NULL, updated_at = now()
         WHERE $5::int IS NOT NULL AND turn_id = $1 AND position = $5::int
       ), ended AS (
         UPDATE turns SET status = $3, last_error = COALESCE($4, last_error), completed_at = now(),
           next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL, updated_at = now()
         WHERE id = $1 AND lease_owner = $2 AND status IN ${OPEN_TURN_STATES_SQL}
         RETURNING contact_id
       )
       SELECT EXISTS (SELECT 1 FROM ended) AS ended, w.first, w.last
       FROM (SELECT min(m.received_at) AS first, max(m.received_at) AS last
             FROM messages m JOIN ended e ON m.contact_id = e.contact_id
             WHERE m.awaiting_turn) w`,
      [turnId, owner, status, error, sentPart?.position ?? null, sentPart?.wamid ?? null],
    );
    return {
      ended: row?.ended ?? false,
      awaiting: row?.first && row.last ? { first: row.first, last: row.last } : null,
    };
  }

  /** Enters the sending step; the first time sets the reply retry horizon. Returns that horizon. */
  async startSending(turnId: string, owner: string, horizonMs: number): Promise<Date | null> {
    const [turn] = await rows<{ reply_deadline: Date }>(
      this.db,
      `UPDATE turns SET status = 'sending', next_attempt_at = NULL,
         reply_deadline = COALESCE(reply_deadline, now() + $3::float8 * interval '1 millisecond'),
         updated_at = now()
       WHERE id = $1 AND lease_owner = $2 AND status IN ('answered', 'sending')
       RETURNING reply_deadline`,
      [turnId, owner, horizonMs],
    );
    return turn?.reply_deadline ?? null;
  }

  /** The parts still to send, as the typed messages they were validated into when stored. */
  queuedParts(turnId: string): Promise<QueuedTurnPart[]> {
    return rows<QueuedTurnPart>(
      this.db,
      `SELECT * FROM turn_parts WHERE turn_id = $1 AND status = 'queued' ORDER BY position`,
      [turnId],
    );
  }

  /**
   * Records a part's outcome. Not fenced by the lease: a part the platform
   * accepted is recorded as sent whoever holds the turn now.
   */
  async settlePart(
    turnId: string,
    position: number,
    status: Exclude<PartState, 'queued'>,
    detail: { wamid?: string; error?: string },
  ): Promise<void> {
    await this.db.query(
      `UPDATE turn_parts SET status = $3, wamid = COALESCE($4, wamid), error = $5,
         attempts = attempts + 1, updated_at = now()
       WHERE turn_id = $1 AND position = $2`,
      [turnId, position, status, detail.wamid ?? null, detail.error ?? null],
    );
  }

  /** Counts a failed attempt of a part that will be tried again. */
  async countPartAttempt(turnId: string, position: number, error: string): Promise<void> {
    await this.db.query(
      `UPDATE turn_parts SET attempts = attempts + 1, error = $3, updated_at = now()
       WHERE turn_id = $1 AND position = $2`,
      [turnId, position, error],
    );
  }

  /** The first failed part's reason, if any part failed. */
  async firstPartFailure(turnId: string): Promise<string | null> {
    const [part] = await rows<{ position: number; error: string | null }>(
      this.db,
      `SELECT position, error FROM turn_parts WHERE turn_id = $1 AND status = 'failed'
       ORDER BY position LIMIT 1`,
      [turnId],
    );
    return part ? `reply part ${part.position}: ${part.error ?? 'failed'}` : null;
  }

  async get(turnId: string): Promise<TurnWithContact | null> {
    const [turn] = await rows<TurnWithContact>(this.db, `${WITH_CONTACT} WHERE t.id = $1`, [
      turnId,
    ]);
    return turn ?? null;
  }

  /** Newest first, `limit` rows after `cursor`. */
  async list(
    filter: TurnFilter,
    cursor: TimeIdPosition | undefined,
    limit: number,
  ): Promise<TurnPage> {
    const conditions: string[] = [];
    const params: unknown[] = [];
    const param = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    if (filter.status) conditions.push(`t.status = ${param(filter.status)}`);
    if (filter.instanceId) conditions.push(`t.instance_id = ${param(filter.instanceId)}::uuid`);
    if (filter.contact) {
      const key = param(filter.contact);
      conditions.push(`(c.wa_id = ${key} OR c.user_id = ${key})`);
    }
    if (cursor) {
      conditions.push(
        `(t.created_at, t.id) < (${param(cursor.at)}::timestamptz, ${param(cursor.id)}::uuid)`,
      );
    }
    const found = await rows<TurnWithContact & { created_us: string }>(
      this.db,
      `${WITH_CONTACT.replace('SELECT t.*', `SELECT t.*, ${epochMicros('t.created_at')} AS created_us`)}
       ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}
       ORDER BY t.created_at DESC, t.id DESC LIMIT ${param(limit + 1)}`,
      params,
    );
    return {
      turns: found.slice(0, limit).map(({ created_us, ...turn }) => ({
        ...turn,
        cursor: { atMicros: created_us, id: turn.id },
      })),
      hasMore: found.length > limit,
    };
  }

  /** The wamids of each turn's messages, in the order the agent got them. */
  async messageIds(turnIds: string[]): Promise<Map<string, string[]>> {
    const found = await rows<{ turn_id: string; wamids: string[] }>(
      this.db,
      `SELECT turn_id, array_agg(wamid ORDER BY created_at, received_at, seq) AS wamids
       FROM messages WHERE turn_id = ANY($1::uuid[]) GROUP BY turn_id`,
      [turnIds],
    );
    return new Map(found.map((row) => [row.turn_id, row.wamids]));
  }

  async parts(turnIds: string[]): Promise<Map<string, TurnPartRow[]>> {
    const found = await rows<TurnPartRow>(
      this.db,
      `SELECT * FROM turn_parts WHERE turn_id = ANY($1::uuid[]) ORDER BY turn_id, position`,
      [turnIds],
    );
    const byTurn = new Map<string, TurnPartRow[]>();
    for (const part of found) byTurn.set(part.turn_id, [...(byTurn.get(part.turn_id) ?? []), part]);
    return byTurn;
  }

  /**
   * Reopens a failed turn with the same id and messages: without an answer it
   * calls the agent again; with one, its failed parts are queued again (sent
   * and uncertain parts are left alone). Fresh retry horizons.
   */
  async reopen(turnId: string): Promise<ReopenResult> {
    try {
      return await this.db.transaction(async (manager) => {
        const [turn] = await rows<TurnRow>(
          manager,
          `UPDATE turns SET
             status = CASE WHEN answer IS NULL THEN 'claimed' ELSE 'sending' END,
             last_error = NULL, next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL,
             agent_deadline = NULL, reply_deadline = NULL, completed_at = NULL, updated_at = now()
           WHERE id = $1 AND status = 'failed'
           RETURNING *`,
          [turnId],
        );
        if (!turn) return { kind: 'not_failed' } as const;
        await manager.query(
          `UPDATE turn_parts SET status = 'queued', error = NULL, updated_at = now()
           WHERE turn_id = $1 AND status = 'failed'`,
          [turnId],
        );
        return { kind: 'reopened', turn } as const;
      });
    } catch (error) {
      if (sqlState(error) !== UNIQUE_VIOLATION) throw error;
      const [open] = await rows<{ id: string }>(
        this.db,
        `SELECT o.id FROM turns t JOIN turns o ON o.contact_id = t.contact_id
         WHERE t.id = $1 AND o.status IN ${OPEN_TURN_STATES_SQL}`,
        [turnId],
      );
      return { kind: 'busy', turnId: open?.id ?? 'unknown' };
    }
  }

  /**
   * Contacts whose waiting messages should have gone to the agent by `asOf`
   * (their buffer's due time, by the rule of buffer-due.ts with the quiet
   * delay only when `live`, passed more than `graceMs` before it) and that
   * have no open turn to wait for. Each instance's buffer timing is its own
   * when `own` names it, else `timing`. For the sweeper.
   */
  overdueContacts(
    timing: BufferTiming,
    own: Array<{ instanceId: string } & BufferTiming>,
    live: boolean,
    graceMs: number,
    asOf: Date,
    limit = 1000,
  ): Promise<Array<{ instance_id: string; contact_id: string }>> {
    const due = bufferDueSql({
      first: 'min(m.received_at)',
      last: 'max(m.received_at)',
      delayMs: 'CASE WHEN $9 THEN COALESCE(o.delay_ms, $1::float8) END',
      maxWaitMs: 'COALESCE(o.max_wait_ms, $2::float8)',
    });
    return rows(
      this.db,
      `SELECT m.instance_id, m.contact_id FROM messages m
       LEFT JOIN unnest($6::uuid[], $7::float8[], $8::float8[]) AS o(instance_id, delay_ms, max_wait_ms)
         ON o.instance_id = m.instance_id
       WHERE m.awaiting_turn
         AND NOT EXISTS (
           SELECT 1 FROM turns t WHERE t.contact_id = m.contact_id
             AND t.status IN ${OPEN_TURN_STATES_SQL})
       GROUP BY m.instance_id, m.contact_id, o.delay_ms, o.max_wait_ms
       HAVING ${due} < $4::timestamptz - $3::float8 * interval '1 millisecond'
       LIMIT $5`,
      [
        timing.delayMs,
        timing.maxWaitMs,
        graceMs,
        asOf,
        limit,
        own.map((o) => o.instanceId),
        own.map((o) => o.delayMs),
        own.map((o) => o.maxWaitMs),
        live,
      ],
    );
  }

  /** Open turns nobody works on: the lease expired (the worker died) and no retry is pending. */
  async resumable(graceMs: number, limit = 500): Promise<string[]> {
    const found = await rows<{ id: string }>(
      this.db,
      `SELECT id FROM turns
       WHERE status IN ${OPEN_TURN_STATES_SQL}
         AND (lease_until IS NULL OR lease_until < now())
         AND (next_attempt_at IS NULL OR next_attempt_at < now() - $1::float8 * interval '1 millisecond')
       ORDER BY created_at LIMIT $2`,
      [graceMs, limit],
    );
    return found.map((turn) => turn.id);
  }

  /** Turns per open state, and failed turns (dead letters awaiting an operator). */
  async countsByState(): Promise<Array<{ status: TurnState; count: number }>> {
    return rows<{ status: TurnState; count: number }>(
      this.db,
      `SELECT status, count(*)::int AS count FROM turns
       WHERE status IN ${OPEN_TURN_STATES_SQL} OR status = 'failed'
       GROUP BY status`,
    );
  }
}
