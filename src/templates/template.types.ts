/** A template status event as the platform sent it, made storable. */
export interface TemplateEvent {
  /** The business account (the delivery's entry id). */
  channelAccountId: string;
  templateId: string;
  templateName: string | null;
  templateLanguage: string | null;
  /** APPROVED, REJECTED, PAUSED, … */
  event: string;
  reason: string | null;
  at: Date;
}
