import type { InboundMessage, InboundStatus } from '../platform/webhook-payload.js';

/** Column widths of the rows written (see the migrations). */
const MAX_WAMID = 256;
const MAX_CONTACT = 32;
const MAX_TYPE = 32;
const MAX_USER_ID = 128;
const MAX_NAME = 256;

/** A platform timestamp is believed between these bounds; otherwise the arrival time stands in. */
const EARLIEST_TIMESTAMP_MS = Date.UTC(2009, 0, 1);
const MAX_CLOCK_AHEAD_MS = 24 * 60 * 60 * 1000;

/** Delivery states in the order they happen; `failed` stands last and keeps its errors. */
export const STATUS_RANK: Readonly<Record<string, number>> = {
  sent: 1,
  delivered: 2,
  read: 3,
  failed: 4,
};

export interface InboundMessageRow {
  wamid: string;
  contact: string;
  type: string;
  /** The platform's message object as JSON, made storable. */
  body: string;
  /** The platform's timestamp, or the arrival time when it is unusable. */
  sentAt: Date;
}

export interface StatusRow {
  wamid: string;
  recipient: string;
  status: string;
  errors: string | null;
}

export type Parsed<T> = { ok: true; row: T } | { ok: false; reason: string };

/** Unpaired UTF-16 surrogates (PostgreSQL refuses them) become U+FFFD. */
function wellFormed(text: string): string {
  return text.replace(
    /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    '\ufffd',
  );
}

/** A short, printable, NUL-free string no longer than `max`, or null. */
function cleanText(value: unknown, max: number): string | null {
  if (typeof value !== 'string') return null;
  // eslint-disable-next-line no-control-regex
  const text = value.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return text.length > 0 && text.length <= max ? text : null;
}

/** Like cleanText, but cut to `max` characters instead of refused. */
export function fitText(value: unknown, max: number): string | null {
  if (typeof value !== 'string') return null;
  const text = wellFormed(value.replaceAll('\0', ''));
  if (text.length === 0) return null;
  return [...text].slice(0, max).join('');
}

/**
 * JSON that PostgreSQL's jsonb accepts: it refuses `\u0000` and unpaired
 * surrogates, which JSON.stringify writes as escapes (so the check is cheap).
 */
export function storableJson(value: unknown): string {
  const json = JSON.stringify(value);
  if (!/\\u0000|\\ud[89a-f]/i.test(json)) return json;
  return JSON.stringify(value, (_key, item: unknown) =>
    typeof item === 'string' ? wellFormed(item.replaceAll('\0', '')) : item,
  );
}

/** The message's time, or `receivedAt` when the platform's value is missing or implausible. */
export function messageTime(timestamp: unknown, receivedAt: Date): Date {
  const seconds =
    typeof timestamp === 'string' || typeof timestamp === 'number' ? Number(timestamp) : NaN;
  const ms = seconds * 1000;
  if (!Number.isFinite(ms) || ms < EARLIEST_TIMESTAMP_MS) return receivedAt;
  if (ms > receivedAt.getTime() + MAX_CLOCK_AHEAD_MS) return receivedAt;
  return new Date(ms);
}

/**
 * A message as it can be stored: one with no usable id or sender cannot be
 * (skipped and counted); any other bad field gets a safe value.
 */
export function inboundMessageRow(message: unknown, receivedAt: Date): Parsed<InboundMessageRow> {
  if (typeof message !== 'object' || message === null)
    return { ok: false, reason: 'not an object' };
  const raw = message as Partial<InboundMessage>;
  const wamid = cleanText(raw.id, MAX_WAMID);
  if (!wamid) return { ok: false, reason: 'no usable id' };
  const contact = cleanText(raw.from, MAX_CONTACT);
  if (!contact) return { ok: false, reason: 'no usable sender' };
  return {
    ok: true,
    row: {
      wamid,
      contact,
      type: cleanText(raw.type, MAX_TYPE) ?? 'unknown',
      body: storableJson(message),
      sentAt: messageTime(raw.timestamp, receivedAt),
    },
  };
}

/** The least a message can be stored with when its object itself cannot be. */
export function fallbackBody(row: InboundMessageRow): string {
  return JSON.stringify({
    id: row.wamid,
    from: row.contact,
    type: row.type,
    timestamp: String(Math.floor(row.sentAt.getTime() / 1000)),
    unstorable: true,
  });
}

export interface ContactRow {
  waId: string;
  userId: string | null;
  name: string | null;
  /** The latest message time (capped at its arrival): it opens the service window. */
  lastInboundAt: Date;
}

/** One row per contact of the delivery's messages, with its latest time and its profile. */
export function contactRows(
  messages: InboundMessageRow[],
  profiles: ReadonlyArray<{ wa_id?: unknown; user_id?: unknown; profile?: { name?: unknown } }>,
  receivedAt: Date,
): ContactRow[] {
  const byWaId = new Map<string, ContactRow>();
  for (const message of messages) {
    // Never later than the arrival: a clock far ahead must not hold the window open.
    const at = new Date(Math.min(message.sentAt.getTime(), receivedAt.getTime()));
    const known = byWaId.get(message.contact);
    if (!known) {
      byWaId.set(message.contact, {
        waId: message.contact,
        userId: null,
        name: null,
        lastInboundAt: at,
      });
    } else if (at > known.lastInboundAt) {
      known.lastInboundAt = at;
    }
  }
  for (const profile of profiles) {
    const contact = typeof profile?.wa_id === 'string' ? byWaId.get(profile.wa_id) : undefined;
    if (!contact) continue;
    contact.userId = fitText(profile.user_id, MAX_USER_ID) ?? contact.userId;
    contact.name = fitText(profile.profile?.name, MAX_NAME) ?? contact.name;
  }
  return [...byWaId.values()];
}

/**
 * The statuses to apply, one per wamid (the furthest along, as a later one
 * in the same delivery would win anyway); unknown states are left out.
 */
export function statusRows(statuses: ReadonlyArray<Partial<InboundStatus> | null>): {
  rows: StatusRow[];
  ignored: number;
} {
  const byWamid = new Map<string, StatusRow>();
  let ignored = 0;
  for (const status of statuses) {
    const wamid = cleanText(status?.id, MAX_WAMID);
    const state = typeof status?.status === 'string' ? status.status : '';
    if (!wamid || STATUS_RANK[state] === undefined) {
      ignored++;
      continue;
    }
    const row: StatusRow = {
      wamid,
      recipient: cleanText(status?.recipient_id, MAX_CONTACT) ?? '',
      status: state,
      errors: Array.isArray(status?.errors) ? storableJson(status.errors) : null,
    };
    const known = byWamid.get(wamid);
    if (!known || STATUS_RANK[state] > STATUS_RANK[known.status]) byWamid.set(wamid, row);
  }
  return { rows: [...byWamid.values()], ignored };
}
