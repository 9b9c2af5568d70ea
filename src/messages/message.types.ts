export type MessageDirection = 'outbound' | 'inbound';

/** Who made a send: a client through /send, or the agent answering a turn. */
/** : the owner, from the platform's phone app (a coexistence echo). */
export type SentBy = 'api' | 'agent' | 'person' | 'phone_app';

/** Delivery states in the order they happen; `failed` stands apart. */
export const MESSAGE_STATUSES = ['sent', 'delivered', 'read', 'failed'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number] | 'received';

/** Delivery states by rank: a stored status only ever moves to a higher one (`failed` last, with its errors). */
export const STATUS_RANK: Readonly<Record<string, number>> = {
  sent: 1,
  delivered: 2,
  read: 3,
  failed: 4,
};

/** A delivery status to apply to a stored message. */
export interface StatusRow {
  wamid: string;
  recipient: string;
  status: string;
  /** The platform's errors, as JSON. */
  errors: string | null;
}

/** A message sent through the service (or received by it), keyed by the platform's wamid (a row of `messages`). */
export interface Message {
  id: string;
  instance_id: string;
  wamid: string;
  direction: MessageDirection;
  /** The other party's address as the message named it: a number, or a business-scoped user id. */
  contact: string;
  /** The other party (null on a status that arrived before its send was stored). */
  contact_id: string | null;
  type: string;
  /** Outbound: the request as the client sent it. Inbound: the platform's object. */
  body: Record<string, unknown>;
  status: MessageStatus;
  errors: unknown[] | null;
  /** Outbound: who sent it (null on a status placeholder). */
  sent_by: SentBy | null;
  /** A person's send: their account (null for ADMIN_USERNAME) and display name at the time. */
  sent_by_account_id: string | null;
  sent_by_account_name: string | null;
  /** The turn that gave it to the agent (inbound). */
  turn_id: string | null;
  /** Inbound and not yet in a turn. */
  awaiting_turn: boolean;
  /** Past history the platform sent for a number shared with the phone app (no turn, no window, no event). */
  imported: boolean;
  /** When it reached the webhook; with `seq`, orders messages of the same second. */
  received_at: Date;
  seq: string;
  /** The transaction that stored it, or moved it to its contact (xid8): following orders by it. */
  stored_tx: string;
  /** Inbound: the platform's timestamp. Outbound: when it was stored. */
  created_at: Date;
  updated_at: Date;
}

/** When a contact's waiting messages arrived: the first and the last. */
export interface AwaitingSpan {
  first: Date;
  last: Date;
}

/** A stored message with its contact's keys. */
export interface StoredMessage extends Message {
  contact_wa_id: string | null;
  contact_user_id: string | null;
}

/** A message of the conversation before a turn, as the agent's context gives it. */
export interface ContextMessage {
  wamid: string;
  direction: MessageDirection;
  type: string;
  body: Record<string, unknown>;
  status: MessageStatus;
  errors: unknown[] | null;
  sent_by: SentBy | null;
  sent_by_account_name: string | null;
  imported: boolean;
  created_at: Date;
  /** Its words (a text's body, a caption, a file name), up to 120 characters. */
  text: string | null;
}
