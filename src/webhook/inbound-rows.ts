import type { InboundContact, InboundMessage, InboundStatus } from '../platform/webhook-payload.js';
import {
  identityKey,
  type Identity,
  type IdentityChange,
  type IdentityRow,
} from '../contacts/contact-identity.js';
import { STATUS_RANK, type StatusRow } from '../messages/message.types.js';

export type { Identity, IdentityChange, IdentityRow };

/** Column widths of the rows written (see the migrations). */
const MAX_WAMID = 256;
const MAX_WA_ID = 32;
const MAX_TYPE = 32;
const MAX_USER_ID = 128;
const MAX_NAME = 256;

/** System messages that announce a new number or user id for a contact. */
const IDENTITY_CHANGES = new Set(['user_changed_number', 'user_changed_user_id']);

/** A platform timestamp is believed between these bounds; otherwise the arrival time stands in. */
const EARLIEST_TIMESTAMP_MS = Date.UTC(2009, 0, 1);
const MAX_CLOCK_AHEAD_MS = 24 * 60 * 60 * 1000;

export interface InboundMessageRow extends Identity {
  wamid: string;
  /** The sender as the message names it: the number, or the user id when the number is hidden. */
  address: string;
  parentUserId: string | null;
  type: string;
  /** The platform's message object as JSON, made storable. */
  body: string;
  /** The platform's timestamp, or the arrival time when it is unusable. */
  sentAt: Date;
  /** When the delivery holding it reached the webhook. */
  receivedAt: Date;
  /** Set on a system message that changes the sender's number or user id. */
  change?: IdentityChange;
  /** A short text's words, trimmed and upper-cased (to match stop and start words). */
  word?: string;
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
 * A message as it can be stored: one with no usable id or sender (neither a
 * number nor a user id) cannot be (skipped and counted); any other bad field
 * gets a safe value.
 */
export function inboundMessageRow(message: unknown, receivedAt: Date): Parsed<InboundMessageRow> {
  if (typeof message !== 'object' || message === null)
    return { ok: false, reason: 'not an object' };
  const raw = message as Partial<InboundMessage>;
  const wamid = cleanText(raw.id, MAX_WAMID);
  if (!wamid) return { ok: false, reason: 'no usable id' };
  const waId = cleanText(raw.from, MAX_WA_ID);
  const userId = cleanText(raw.from_user_id, MAX_USER_ID);
  if (!waId && !userId) return { ok: false, reason: 'no usable sender' };
  const type = cleanText(raw.type, MAX_TYPE) ?? 'unknown';
  return {
    ok: true,
    row: {
      wamid,
      address: (waId ?? userId)!,
      waId,
      userId,
      parentUserId: cleanText(raw.from_parent_user_id, MAX_USER_ID),
      type,
      body: storableJson(message),
      sentAt: messageTime(raw.timestamp, receivedAt),
      receivedAt,
      change: type === 'system' ? identityChange(raw, waId, userId) : undefined,
      word:
        type === 'text' ? shortWord((raw.text as { body?: unknown } | undefined)?.body) : undefined,
    },
  };
}

/** Texts up to this long may be a stop or start word. */
const MAX_WORD = 32;

function shortWord(text: unknown): string | undefined {
  if (typeof text !== 'string' || text.length > MAX_WORD * 2) return undefined;
  const word = text.trim().toUpperCase();
  return word.length > 0 && word.length <= MAX_WORD ? word : undefined;
}

/** The keys a `user_changed_number` or `user_changed_user_id` system message moves a contact to. */
function identityChange(
  message: Partial<InboundMessage>,
  waId: string | null,
  userId: string | null,
): IdentityChange | undefined {
  const system = message.system;
  if (!system || !IDENTITY_CHANGES.has(String(system.type))) return undefined;
  const previousUserId = cleanText(system.previous_user_id, MAX_USER_ID);
  const change: IdentityChange = {
    old: { waId, userId: previousUserId },
    new: {
      waId: system.type === 'user_changed_number' ? cleanText(system.wa_id, MAX_WA_ID) : null,
      // The new id is named in the system object, or is the one the message comes from.
      userId: cleanText(system.user_id, MAX_USER_ID) ?? (userId !== previousUserId ? userId : null),
      parentUserId: cleanText(system.parent_user_id, MAX_USER_ID),
    },
  };
  return change.new.waId || change.new.userId ? change : undefined;
}

/** The least a message can be stored with when its object itself cannot be. */
export function fallbackBody(row: InboundMessageRow): string {
  return JSON.stringify({
    id: row.wamid,
    ...(row.waId ? { from: row.waId } : {}),
    ...(row.userId ? { from_user_id: row.userId } : {}),
    type: row.type,
    timestamp: String(Math.floor(row.sentAt.getTime() / 1000)),
    unstorable: true,
  });
}

/**
 * Completes each message's identity from the delivery's `contacts[]` (the
 * user id of a number, the profile) and returns one row per identity.
 */
export function identityRows(
  messages: InboundMessageRow[],
  profiles: ReadonlyArray<InboundContact | null>,
): IdentityRow[] {
  const profileOf = (message: InboundMessageRow): InboundContact | undefined =>
    profiles.find(
      (profile) =>
        profile !== null &&
        ((message.waId !== null && profile.wa_id === message.waId) ||
          (message.userId !== null && profile.user_id === message.userId)),
    ) ?? undefined;
  const byKey = new Map<string, IdentityRow>();
  for (const message of messages) {
    const profile = profileOf(message);
    message.userId ??= cleanText(profile?.user_id, MAX_USER_ID);
    message.parentUserId ??= cleanText(profile?.parent_user_id, MAX_USER_ID);
    const key = identityKey(message);
    // Never later than the arrival: a clock far ahead must not hold the window open.
    const at =
      message.type === 'system'
        ? null
        : new Date(Math.min(message.sentAt.getTime(), message.receivedAt.getTime()));
    const known = byKey.get(key);
    if (known) {
      if (at && (!known.lastInboundAt || at > known.lastInboundAt)) known.lastInboundAt = at;
      continue;
    }
    byKey.set(key, {
      key,
      waId: message.waId,
      userId: message.userId,
      parentUserId: message.parentUserId,
      username: fitText(profile?.profile?.username, MAX_NAME),
      name: fitText(profile?.profile?.name, MAX_NAME),
      lastInboundAt: at,
    });
  }
  return [...byKey.values()];
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
      recipient:
        cleanText(status?.recipient_id, MAX_WA_ID) ??
        cleanText(status?.recipient_user_id, MAX_USER_ID) ??
        '',
      status: state,
      errors: Array.isArray(status?.errors) ? storableJson(status.errors) : null,
    };
    const known = byWamid.get(wamid);
    if (!known || STATUS_RANK[state] > STATUS_RANK[known.status]) byWamid.set(wamid, row);
  }
  return { rows: [...byWamid.values()], ignored };
}
