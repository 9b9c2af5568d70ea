import { PLATFORM_ID_PATTERN } from '../common/platform-id.js';
import type { Contact, HandoffRecord } from '../contacts/contact.types.js';
import type { Instance } from '../instances/instance.types.js';
import type { ContextMessage } from '../messages/message.types.js';
import { SERVICE_WINDOW_MS } from '../messages/messages.service.js';
import type { InboundMessage } from '../platform/webhook-payload.js';

/**
 * The payload's version: 2 adds `context` and `contact_state` (an agent that
 * reads only version 1's fields keeps working).
 */
export const AGENT_PAYLOAD_VERSION = 2;

/** The body POSTed to AGENT_MODULE_URL (contract §7). */
export interface AgentRequest {
  payload_version: number;
  batch_id: string;
  instance: {
    id: string;
    name: string;
    phone_number_id: string;
    display_phone_number: string | null;
  };
  /** `wa_id` is null for a user who hides the number; `user_id` is the business-scoped id. */
  contact: {
    wa_id: string | null;
    user_id: string | null;
    parent_user_id: string | null;
    username: string | null;
    name: string | null;
  };
  messages: AgentMessage[];
  text: string;
  /**
   * The template the customer is answering: the last one sent to them in the
   * 24 hours before the burst, with its campaign when one sent it. Absent
   * when there is none.
   */
  answering?: AgentAnswering;
  /** The conversation before the burst (AGENT_CONTEXT_MESSAGES), oldest first. */
  context: AgentContextMessage[];
  contact_state: AgentContactState;
}

/** A message of the conversation before the burst, and who wrote it. */
export interface AgentContextMessage {
  id: string;
  /** customer, agent, api (a client's send), person (someone in the console), phone_app (the owner's phone). */
  from: 'customer' | 'agent' | 'api' | 'person' | 'phone_app';
  /** A person's name (from: person). */
  person?: string;
  type: string;
  text: string;
  timestamp: string;
  /** Imported history (a number shared with the phone app). */
  imported: boolean;
  /** Outbound: sent, delivered, read or failed, as the platform last said. */
  status?: string;
  placeholder?: { reason: string; code: number | null };
  media?: AgentMedia;
}

/** Where the contact stands as the burst reaches the agent. */
export interface AgentContactState {
  wa_id: string | null;
  user_id: string | null;
  window: { open: boolean; until: string | null };
  opted_out: boolean;
  marketing_opted_out: boolean;
  /** The last handoff to a person: active or not, since when, until when, by whom, why. */
  handoff: {
    active: boolean;
    since: string | null;
    until: string | null;
    by: string | null;
    reason: string | null;
  };
  /** The latest handoffs (up to HANDOFF_HISTORY of them), newest first. */
  handoffs: AgentHandoff[];
}

/** One pause of the agent for a contact, as the history keeps it. */
export interface AgentHandoff {
  since: string;
  /** When it ended or ends: its end if someone ended it early, else its time. */
  until: string | null;
  /** Whether it runs now. */
  active: boolean;
  by: string | null;
  /** The person who paused it (by person, or auto for their send). */
  person: string | null;
  reason: string | null;
  /** Who ended it early (api, admin, person, agent, auto); null when it ran out or runs now. */
  ended_by: string | null;
}

/** How many of a contact's latest handoffs the agent is given. */
export const HANDOFF_HISTORY = 5;

export interface AgentAnswering {
  message_id: string;
  template: { name: string; language: string | null };
  campaign: { id: string; name: string } | null;
  sent_at: string;
}

export interface AgentMessage {
  id: string;
  type: string;
  timestamp: string;
  text: string;
  context?: { from?: string; id?: string };
  content: unknown;
  /**
   * A message the platform could not show (`unsupported`, or its error
   * 131060: often the first message of a click-to-chat ad): a lead to answer,
   * with the platform's reason.
   */
  placeholder?: { reason: string; code: number | null };
  /** A media message's file: a signed URL of this service that downloads it once, without a key. */
  media?: AgentMedia;
}

export interface AgentMedia {
  id: string;
  mime_type: string | null;
  /** Expires after AGENT_MEDIA_URL_TTL_S; null when PUBLIC_URL is not set. */
  url: string | null;
}

/** A signed URL for a media id (MediaLinks.url), or null. */
export type MediaUrl = (mediaId: string) => string | null;

const MEDIA_TYPES = new Set(['image', 'video', 'audio', 'document', 'sticker']);

/** A media message's file as the agent gets it; undefined for other messages. */
export function mediaOf(
  type: string,
  content: unknown,
  mediaUrl: MediaUrl,
): AgentMedia | undefined {
  if (!MEDIA_TYPES.has(type) || !content || typeof content !== 'object') return undefined;
  // The platform's message names it by its type (inbound, echoes, history); a send's request, `media`.
  const fields = content as Record<string, unknown>;
  const media = fields[type] ?? fields.media;
  const { id, mime_type: mimeType } = (media ?? {}) as { id?: unknown; mime_type?: unknown };
  if (typeof id !== 'string' || !PLATFORM_ID_PATTERN.test(id)) return undefined;
  return { id, mime_type: typeof mimeType === 'string' ? mimeType : null, url: mediaUrl(id) };
}

/** The platform's code for a message it cannot show now. */
const UNAVAILABLE_CODE = 131060;

/** Why the platform could not show a message, when it could not. */
export function placeholderOf(message: InboundMessage): AgentMessage['placeholder'] {
  const errors = Array.isArray(message.errors) ? (message.errors as unknown[]) : [];
  const first = (errors[0] ?? {}) as { code?: unknown; title?: unknown; message?: unknown };
  const code = typeof first.code === 'number' ? first.code : null;
  if (message.type !== 'unsupported' && code !== UNAVAILABLE_CODE) return undefined;
  const reason =
    (typeof first.title === 'string' && first.title) ||
    (typeof first.message === 'string' && first.message) ||
    'The platform does not support this message type.';
  return { reason, code };
}

/** The words a person would read in a message: body, caption, reply title, place, emoji. */
export function messageText(message: InboundMessage): string {
  const placeholder = placeholderOf(message);
  if (placeholder) return `[a message the platform cannot show: ${placeholder.reason}]`;
  const content = (message[message.type] ?? {}) as Record<string, unknown>;
  const str = (value: unknown): string => (typeof value === 'string' ? value : '');
  switch (message.type) {
    case 'text':
      return str(content.body);
    case 'image':
    case 'video':
      return str(content.caption);
    case 'document':
      return str(content.caption) || str(content.filename);
    case 'button':
      return str(content.text);
    case 'interactive': {
      const reply = (content.button_reply ?? content.list_reply ?? {}) as Record<string, unknown>;
      return str(reply.title);
    }
    case 'location': {
      const coordinate = (value: unknown): string =>
        typeof value === 'number' || typeof value === 'string' ? String(value) : '';
      const [latitude, longitude] = [coordinate(content.latitude), coordinate(content.longitude)];
      return latitude && longitude ? `${latitude},${longitude}` : '';
    }
    case 'reaction':
      return str(content.emoji);
    default:
      return '';
  }
}

export function buildAgentRequest(
  batchId: string,
  instance: Instance,
  contact: AgentRequest['contact'],
  messages: InboundMessage[],
  answering?: AgentAnswering | null,
  around: { context: AgentContextMessage[]; contactState: AgentContactState } = {
    context: [],
    contactState: unknownContactState(contact),
  },
  mediaUrl: MediaUrl = () => null,
): AgentRequest {
  const agentMessages = messages.map((message) => {
    const placeholder = placeholderOf(message);
    const media = mediaOf(message.type, message, mediaUrl);
    return {
      id: message.id,
      type: message.type,
      timestamp: message.timestamp,
      text: messageText(message),
      ...(message.context ? { context: message.context } : {}),
      content: message[message.type] ?? {},
      ...(placeholder ? { placeholder } : {}),
      ...(media ? { media } : {}),
    };
  });
  return {
    payload_version: AGENT_PAYLOAD_VERSION,
    batch_id: batchId,
    instance: {
      id: instance.id,
      name: instance.name,
      phone_number_id: instance.phone_number_id,
      display_phone_number: instance.display_phone_number,
    },
    contact,
    messages: agentMessages,
    text: agentMessages.map((message) => message.text).join('\n'),
    ...(answering ? { answering } : {}),
    context: around.context,
    contact_state: around.contactState,
  };
}

/** A stored message of the conversation as the agent's context gives it. */
export function contextMessage(
  message: ContextMessage,
  mediaUrl: MediaUrl = () => null,
): AgentContextMessage {
  const media = mediaOf(message.type, message.body, mediaUrl);
  const from: AgentContextMessage['from'] =
    message.direction === 'inbound' ? 'customer' : (message.sent_by ?? 'api');
  const placeholder =
    message.direction === 'inbound' ? placeholderOf(message.body as InboundMessage) : undefined;
  const template =
    message.type === 'template' && typeof message.body.template_name === 'string'
      ? `[template ${message.body.template_name}]`
      : '';
  return {
    id: message.wamid,
    from,
    ...(from === 'person' && message.sent_by_account_name
      ? { person: message.sent_by_account_name }
      : {}),
    type: message.type,
    text: placeholder
      ? `[a message the platform cannot show: ${placeholder.reason}]`
      : message.direction === 'inbound' || message.sent_by === 'phone_app'
        ? messageText(message.body as InboundMessage)
        : sentText(message.body) || template,
    timestamp: message.created_at.toISOString(),
    imported: message.imported,
    ...(message.direction === 'outbound' ? { status: message.status } : {}),
    ...(placeholder ? { placeholder } : {}),
    ...(media ? { media } : {}),
  };
}

/** The words of a send as its request has them: a text, a caption, an interactive's body. */
function sentText(body: Record<string, unknown>): string {
  const str = (value: unknown): string => (typeof value === 'string' ? value : '');
  const media = (body.media ?? {}) as Record<string, unknown>;
  const interactive = (body.interactive ?? {}) as { body?: { text?: unknown } };
  return (
    str(body.body) ||
    str(body.caption) ||
    str(media.caption) ||
    str(interactive.body?.text) ||
    str((body.text as { body?: unknown } | undefined)?.body)
  );
}

/** A contact whose row could not be read: its keys, nothing open, nothing paused. */
export function unknownContactState(
  keys: Pick<AgentRequest['contact'], 'wa_id' | 'user_id'>,
): AgentContactState {
  return {
    wa_id: keys.wa_id,
    user_id: keys.user_id,
    window: { open: false, until: null },
    opted_out: false,
    marketing_opted_out: false,
    handoff: { active: false, since: null, until: null, by: null, reason: null },
    handoffs: [],
  };
}

/** Where a contact stands now: window, opt-outs, its last handoff and those before. */
export function contactState(
  contact: Contact,
  history: HandoffRecord[] = [],
  now = Date.now(),
): AgentContactState {
  const until = contact.last_inbound_at
    ? contact.last_inbound_at.getTime() + SERVICE_WINDOW_MS
    : null;
  const iso = (date: Date | null) => date?.toISOString() ?? null;
  return {
    wa_id: contact.wa_id,
    user_id: contact.user_id,
    window: {
      open: until !== null && until > now,
      until: until === null ? null : new Date(until).toISOString(),
    },
    opted_out: contact.opted_out_at !== null,
    marketing_opted_out: contact.marketing_opted_out_at !== null,
    handoff: {
      active: contact.handoff_until !== null && contact.handoff_until.getTime() > now,
      since: iso(contact.handoff_since),
      until: iso(contact.handoff_until),
      by: contact.handoff_by,
      reason: contact.handoff_reason,
    },
    handoffs: history.map((pause) => {
      const end = pause.ended_at ?? pause.until;
      return {
        since: pause.since.toISOString(),
        until: iso(end),
        active: pause.ended_at === null && pause.until !== null && pause.until.getTime() > now,
        by: pause.by,
        person: pause.account_name,
        reason: pause.reason,
        // The clock ending a pause is its running out, not someone ending it.
        ended_by: pause.ended_by === 'timer' ? null : pause.ended_by,
      };
    }),
  };
}
