import type { WebhookDelivery } from '../queue/queues.js';

/**
 * Stores a batch of deliveries read from the stream (rejecting when any of
 * them cannot be stored). InboundService is the one; webhook-stream/ names
 * only this, as the inbound path reaches the buffer, which reads the backlog
 * here (see WebhookWorkerModule).
 */
export abstract class DeliveryHandler {
  abstract processBatch(deliveries: WebhookDelivery[]): Promise<unknown>;
}
