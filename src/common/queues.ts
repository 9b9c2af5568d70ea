/** Queue and job names, with their payload types: the one place they are declared. */

/** Signed webhook deliveries, written before the 200 goes out. */
export const WEBHOOK_QUEUE = 'webhook-deliveries';
export const WEBHOOK_DELIVERY_JOB = 'delivery';

export interface WebhookDeliveryJob {
  /** The delivery exactly as received (its signature was checked over these bytes). */
  body: string;
  /** When it was received (ms since epoch). */
  receivedAt: number;
}
