/** The parts of the platform's webhook envelope the service reads (reference: WebhookPayload). */
export interface WebhookEnvelope {
  object?: string;
  entry?: WebhookEntry[];
}

export interface WebhookEntry {
  id?: string;
  /** Epoch seconds (template events carry their time here). */
  time?: number;
  changes?: WebhookChange[];
}

export interface WebhookChange {
  field?: string;
  value?: MessagesValue & TemplateStatusValue & NumberQualityValue & BusinessCapabilityValue;
}

export interface MessagesValue {
  metadata?: { display_phone_number?: string; phone_number_id?: string };
  contacts?: InboundContact[];
  messages?: InboundMessage[];
  statuses?: InboundStatus[];
  /** `user_preferences`: a customer stopping or resuming marketing messages in the app. */
  user_preferences?: UserPreference[];
  /** `history`: past conversations, in chunks (or the business declining to share them). */
  history?: HistoryChunkValue[];
  /** `smb_app_state_sync`: the phone's address book, entry by entry. */
  state_sync?: PhoneContactSync[];
  /**
   * `smb_message_echoes`: what the owner sent from the phone app (`from` is
   * the business); to `to`, or to `to_user_id` for a customer who hides the number.
   */
  message_echoes?: Array<InboundMessage & { to?: string; to_user_id?: string }>;
}

export interface HistoryChunkValue {
  metadata?: { phase?: number; chunk_order?: number; progress?: number };
  threads?: Array<{
    /** The customer's number, or their user id when they hide it. */
    id?: string;
    messages?: Array<InboundMessage & { history_context?: { status?: string } }>;
  }>;
  errors?: unknown[];
}

export interface PhoneContactSync {
  type?: string;
  contact?: { full_name?: string; first_name?: string; phone_number?: string };
  /** `add` (or an update) or `remove`. */
  action?: string;
  metadata?: { timestamp?: string | number };
}

export interface UserPreference {
  wa_id?: string;
  /** The customer's user id (alone when they hide the number). */
  user_id?: string;
  category?: string;
  /** `stop` or `resume`. */
  value?: string;
  /** Epoch seconds, a number here (message timestamps are strings). */
  timestamp?: number | string;
}

/** The platform's code for a marketing template a customer stopped (sends fail with it). */
export const MARKETING_STOPPED_CODE = 131050;

/**
 * Who wrote. Since 2026 a user has a business-scoped user id (`CC.<alphanumeric>`);
 * one who hides the number behind a username has no `wa_id`.
 */
export interface InboundContact {
  wa_id?: string;
  user_id?: string;
  parent_user_id?: string;
  profile?: { name?: string; username?: string };
}

export interface InboundMessage {
  id: string;
  /** The sender's number; absent when the user hides it (then `from_user_id` names them). */
  from?: string;
  from_user_id?: string;
  from_parent_user_id?: string;
  timestamp: string;
  type: string;
  context?: { from?: string; id?: string };
  /** `type: system`: an identity change (`user_changed_number`, `user_changed_user_id`). */
  system?: {
    type?: string;
    body?: string;
    wa_id?: string;
    user_id?: string;
    parent_user_id?: string;
    previous_user_id?: string;
    previous_parent_user_id?: string;
  };
  [content: string]: unknown;
}

export interface InboundStatus {
  id: string;
  status: string;
  timestamp?: string;
  /** The recipient's number; absent for a user reached by user id who hides it. */
  recipient_id?: string;
  recipient_user_id?: string;
  recipient_parent_user_id?: string;
  errors?: unknown[];
}

/**
 * A template change: `message_template_status_update` (event, reason,
 * category), `message_template_quality_update` (the scores) or
 * `template_category_update` (the categories; `correct_category` when the
 * platform announces the change a day ahead).
 */
export interface TemplateStatusValue {
  event?: string;
  message_template_id?: number | string;
  message_template_name?: string;
  message_template_language?: string;
  message_template_category?: string;
  reason?: string | null;
  previous_quality_score?: string;
  new_quality_score?: string;
  previous_category?: string;
  new_category?: string;
  correct_category?: string;
}

/** `phone_number_quality_update`: the number named only by its display number. */
export interface NumberQualityValue {
  display_phone_number?: string;
  event?: string;
  current_limit?: string;
}

/** `business_capability_update`: the business portfolio's limits (the entry names its account). */
export interface BusinessCapabilityValue {
  max_daily_conversations_per_business?: number | string;
  /** The field's older name. */
  max_daily_conversation_per_phone?: number | string;
  max_phone_numbers_per_waba?: number;
}

/**
 * A daily limit as the platform writes it: a number (-1: unlimited), or a
 * tier (`TIER_1K`, `TIER_250`, `TIER_UNLIMITED`); null for unlimited,
 * undefined when unread.
 */
export function dailyLimitOf(value: unknown): number | null | undefined {
  if (value === -1) return null;
  if (typeof value === 'number')
    return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  if (value === 'TIER_UNLIMITED') return null;
  const tier = /^TIER_(\d+)(K?)$/.exec(value);
  if (!tier) return undefined;
  return Number(tier[1]) * (tier[2] ? 1000 : 1);
}

/** The rate the platform allows a number after its throughput upgrade. */
export const UPGRADED_THROUGHPUT = 1000;

/** The webhook fields that tell of a template's changes. */
export const TEMPLATE_FIELDS = [
  'message_template_status_update',
  'message_template_quality_update',
  'template_category_update',
] as const;
