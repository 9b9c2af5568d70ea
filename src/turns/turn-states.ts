import type { SendMessage } from '../send/send-kinds.js';

/**
 * A turn is one exchange with the agent: a contact's buffered messages go to
 * the agent (the turn's id is the agent payload's `batch_id`), and its answer
 * goes back to the contact as one or more reply parts. PostgreSQL holds every
 * turn's state; BullMQ jobs only wake a worker up to advance it.
 *
 * | state      | means                                   | next                                    |
 * |------------|-----------------------------------------|-----------------------------------------|
 * | `claimed`  | messages taken, the agent not called    | `calling`; `skipped`                    |
 * |            | (a reopened or migrated turn)           |                                         |
 * | `calling`  | the agent is being called, or a retry   | `sending`; `done` (nothing to send);    |
 * |            | waits (`next_attempt_at`); a fresh      | `failed` (4xx, or retries used up)      |
 * |            | claim starts here, first call counted   |                                         |
 * | `answered` | answer stored, sending not begun (only  | `sending`                               |
 * |            | turns stored before sends began so)     |                                         |
 * | `sending`  | answer stored, parts going out, or a    | `done`; `failed` (a part failed)        |
 * |            | retry waits                             |                                         |
 * | `done`     | every part sent (or `uncertain`)        | —                                       |
 * | `failed`   | dead letter: POST /admin/turns/{id}/retry reopens it as `claimed` (no answer yet) or `sending` (its failed parts queued again) |
 * | `skipped`  | the instance was deactivated, the agent turned off, or the contact gone | —       |
 *
 * Parts: `queued` → `sent` (with its wamid) | `failed` (with the reason) |
 * `uncertain` (the POST reached the platform and got no answer: never
 * repeated) | `skipped` (an invalid element of `replies`).
 *
 * A worker works on a turn only under its lease (`lease_owner`,
 * `lease_until`), renewed while it works; every write is fenced by it. When
 * a worker dies its lease expires and any worker resumes the turn from the
 * state it reached, under the same id.
 */
export const OPEN_TURN_STATES = ['claimed', 'calling', 'answered', 'sending'] as const;
export const FINAL_TURN_STATES = ['done', 'failed', 'skipped'] as const;
export const TURN_STATES = [...OPEN_TURN_STATES, ...FINAL_TURN_STATES] as const;

export type FinalTurnState = (typeof FINAL_TURN_STATES)[number];
export type TurnState = (typeof TURN_STATES)[number];

export const PART_STATES = ['queued', 'sent', 'failed', 'uncertain', 'skipped'] as const;
export type PartState = (typeof PART_STATES)[number];

/** SQL list of the open states, for queries and the partial indexes that match them. */
export const OPEN_TURN_STATES_SQL = `(${OPEN_TURN_STATES.map((s) => `'${s}'`).join(', ')})`;

export interface TurnRow {
  id: string;
  instance_id: string;
  contact_id: string;
  status: TurnState;
  /** Agent calls made so far. */
  attempts: number;
  last_error: string | null;
  /** The agent's answer as received (null until it answered). */
  answer: unknown;
  lease_owner: string | null;
  lease_until: Date | null;
  next_attempt_at: Date | null;
  agent_deadline: Date | null;
  reply_deadline: Date | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

/** A part as stored; a skipped part keeps the agent's element as it came. */
export interface TurnPartRow {
  turn_id: string;
  position: number;
  /** The /send route the part goes through (text, image, interactive…). */
  kind: string;
  /** The validated /send body, without `to`. */
  body: Record<string, unknown>;
  status: PartState;
  wamid: string | null;
  error: string | null;
  attempts: number;
  updated_at: Date;
}

/**
 * A part still to send: validated once, when the answer came, so its row is
 * read back as the typed message it was stored as (the same JSON).
 */
export type QueuedTurnPart = Omit<TurnPartRow, 'kind' | 'body' | 'status'> &
  SendMessage & { status: 'queued' };

/** A part as the answer is turned into parts, before it is stored. */
export type NewTurnPart =
  | (SendMessage & { status: 'queued' })
  | { kind: string; body: Record<string, unknown>; status: 'skipped'; error: string };
