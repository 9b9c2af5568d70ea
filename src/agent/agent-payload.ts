import type { Instance } from '../instances/instance.types.js';
import type { InboundMessage } from '../platform/webhook-payload.js';

/** The body POSTed to AGENT_MODULE_URL (contract §7). */
export interface AgentRequest {
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
}

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
): AgentRequest {
  const agentMessages = messages.map((message) => {
    const placeholder = placeholderOf(message);
    return {
      id: message.id,
      type: message.type,
      timestamp: message.timestamp,
      text: messageText(message),
      ...(message.context ? { context: message.context } : {}),
      content: message[message.type] ?? {},
      ...(placeholder ? { placeholder } : {}),
    };
  });
  return {
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
  };
}
