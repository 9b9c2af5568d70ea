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
  value?: MessagesValue & TemplateStatusValue;
}

export interface MessagesValue {
  metadata?: { display_phone_number?: string; phone_number_id?: string };
  contacts?: Array<{ wa_id?: string; user_id?: string; profile?: { name?: string } }>;
  messages?: InboundMessage[];
  statuses?: InboundStatus[];
}

export interface InboundMessage {
  id: string;
  from: string;
  timestamp: string;
  type: string;
  context?: { from?: string; id?: string };
  [content: string]: unknown;
}

export interface InboundStatus {
  id: string;
  status: string;
  timestamp?: string;
  recipient_id?: string;
  errors?: unknown[];
}

export interface TemplateStatusValue {
  event?: string;
  message_template_id?: number | string;
  message_template_name?: string;
  message_template_language?: string;
  reason?: string | null;
}
