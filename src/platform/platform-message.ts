/**
 * The platform's message object (POST /{phone_number_id}/messages). It names
 * the recipient by number (`to`) or by business-scoped user id (`recipient`):
 * a user id in `to` is accepted and then silently dropped by the platform.
 */
export interface PlatformMessage {
  messaging_product: 'messenger';
  recipient_type: 'individual';
  to?: string;
  recipient?: string;
  type: string;
  context?: { message_id: string };
  [content: string]: unknown;
}
