/** The events a subscription can ask for (`ping` is sent on request only). */
export const EVENT_TYPES = [
  'message.received',
  'message.status',
  'message.sent',
  'template.status',
  'turn.failed',
  'instance.status',
  'contact.handoff',
  'campaign.status',
  'history.imported',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** pending: to be sent (or being retried); delivered: a 2xx came back; failed: retries ran out. */
export const DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** A client's URL and the events it wants (a row of `event_subscriptions`). */
export interface EventSubscription {
  id: string;
  url: string;
  /** null: every instance. */
  instance_id: string | null;
  event_types: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  /** AES-256-GCM ciphertexts (CryptoService), bound to the subscription; never leave the service. */
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_until: Date | null;
  /** When the current run of failures began (null after a success). */
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** One event's delivery to one subscription, with its event (a row of `event_deliveries`). */
export interface EventDeliveryRow {
  id: string;
  seq: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  event_created_at: Date;
  state: DeliveryState;
  attempts: number;
  last_attempt_at: Date | null;
  last_status: number | null;
  last_response: string | null;
  last_error: string | null;
  /** Pending only: when it is tried next (null: as soon as the events before it are through). */
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  created_at: Date;
}

/** A delivery a worker leased, ready to send. */
export interface ClaimedDelivery {
  seq: string;
  subscription_id: string;
  lane: string;
  /** Failures in a row so far (where the retry schedule stands). */
  failures: number;
  event_id: string;
  event_created_at: Date;
  /** The JSON body, exactly as it is signed and sent. */
  body: string;
  url: string;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_until: Date | null;
}

/** What one attempt came to. */
export interface DeliveryAttempt {
  seq: string;
  state: DeliveryState;
  failures: number;
  /** The HTTP status, when the receiver answered. */
  status: number | null;
  /** The start of the response body. */
  response: string | null;
  error: string | null;
  /** Pending after a failure: when to try again. */
  nextAttemptAt: Date | null;
}

/** A lane's end of a lease: its attempts, in order, and when it may go on. */
export interface LaneResult {
  subscriptionId: string;
  lane: string;
  owner: string;
  attempts: DeliveryAttempt[];
  nextAttemptAt: Date;
}
