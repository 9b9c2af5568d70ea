/** The most unread messages counted per contact (a list shows 99+ beyond). */
export const UNREAD_CAP = 100;

/** A message in a line, as a list or a quote shows it. */
export interface MessageLine {
  wamid: string;
  direction: 'inbound' | 'outbound';
  type: string;
  /** Its text, caption or file name (the first 120 characters), null when it has none. */
  text: string | null;
  /** Outbound: who sent it (api, agent, person). */
  sent_by: string | null;
}

/** What an inbox's list shows of a contact's messages. */
export interface ContactSummary {
  /** Inbound messages since a person last read the conversation (at most UNREAD_CAP). */
  unread: number;
  last_message: (MessageLine & { created_at: string }) | null;
}

/**
 * Reads contacts' summaries. MessageStore is the one (it owns the messages);
 * contacts/ names only this, as messages/ reads contacts (see ContactsApiModule).
 */
export abstract class ContactSummaries {
  abstract contactSummaries(contactIds: string[]): Promise<Map<string, ContactSummary>>;
}
