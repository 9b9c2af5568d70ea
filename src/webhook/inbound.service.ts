import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { BufferService } from '../agent/buffer.service.js';
import type { Instance } from '../instances/entities/instance.entity.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { InstancesService } from '../instances/instances.service.js';
import {
  epochSeconds,
  type InboundMessage,
  type InboundStatus,
  type MessagesValue,
  type TemplateStatusValue,
  type WebhookEnvelope,
} from './webhook-payload.js';

/** A status only moves forward; `failed` stands last and keeps its errors. */
const STATUS_RANK_SQL = (column: string): string =>
  `(CASE ${column} WHEN 'sent' THEN 1 WHEN 'delivered' THEN 2 WHEN 'read' THEN 3 WHEN 'failed' THEN 4 ELSE 0 END)`;

export interface NewInboundMessage {
  instance: Instance;
  contact: string;
  wamid: string;
}

export interface DeliveryOutcome {
  /** Messages stored for the first time (re-sent ones are not counted again). */
  newMessages: NewInboundMessage[];
  duplicates: number;
  statuses: number;
  templateEvents: number;
  /** Changes for numbers with no instance, or a deactivated one: acknowledged, not processed. */
  unrouted: number;
  inactive: number;
}

/**
 * Turns one stored webhook delivery into rows: every entry, change, message
 * and status in it. Safe to run twice for the same delivery (and for two
 * processes at once): messages are de-duplicated by their unique wamid.
 */
@Injectable()
export class InboundService {
  private readonly logger = new Logger(InboundService.name);

  constructor(
    private readonly instances: InstancesService,
    @InjectDataSource() private readonly db: DataSource,
    private readonly buffers: BufferService,
    private readonly metrics: MetricsService,
  ) {}

  async processDelivery(envelope: WebhookEnvelope): Promise<DeliveryOutcome> {
    const outcome: DeliveryOutcome = {
      newMessages: [],
      duplicates: 0,
      statuses: 0,
      templateEvents: 0,
      unrouted: 0,
      inactive: 0,
    };
    for (const entry of envelope.entry ?? []) {
      for (const change of entry.changes ?? []) {
        if (change.field === 'messages' && change.value) {
          await this.processMessagesChange(change.value, outcome);
        } else if (change.field === 'message_template_status_update' && change.value) {
          // Template events name the business account (entry.id = channel_account_id).
          if (await this.hasActiveInstanceFor(entry.id)) {
            await this.storeTemplateEvent(entry.id!, entry.time, change.value);
            outcome.templateEvents++;
          } else {
            outcome.unrouted++;
            this.logger.warn(
              { channelAccountId: entry.id },
              'template event for an unknown account ignored',
            );
          }
        }
      }
    }
    if (outcome.duplicates)
      this.metrics.webhookDeliveries.inc({ outcome: 'duplicate' }, outcome.duplicates);
    if (outcome.unrouted)
      this.metrics.webhookDeliveries.inc({ outcome: 'unrouted' }, outcome.unrouted);
    if (outcome.inactive)
      this.metrics.webhookDeliveries.inc({ outcome: 'inactive' }, outcome.inactive);
    // One flush per contact, however many of its messages this delivery held.
    const contacts = new Map(
      outcome.newMessages.map((m) => [`${m.instance.id}:${m.contact}`, m] as const),
    );
    for (const { instance, contact } of contacts.values()) {
      await this.buffers.schedule(instance.id, contact);
    }
    return outcome;
  }

  private async processMessagesChange(
    value: MessagesValue,
    outcome: DeliveryOutcome,
  ): Promise<void> {
    const phoneNumberId = value.metadata?.phone_number_id;
    const instance = phoneNumberId ? await this.instances.findByPhoneNumberId(phoneNumberId) : null;
    if (!instance || !instance.is_active) {
      if (instance) outcome.inactive++;
      else outcome.unrouted++;
      this.logger.warn(
        { phoneNumberId, instanceId: instance?.id },
        instance
          ? 'delivery for a deactivated instance ignored'
          : 'delivery for an unknown number ignored',
      );
      return;
    }
    const profiles = new Map(
      (value.contacts ?? [])
        .filter((contact) => contact.wa_id)
        .map((contact) => [contact.wa_id!, contact]),
    );
    for (const message of value.messages ?? []) {
      if (!message?.id || !message.from) continue;
      const stored = await this.storeMessage(instance, message);
      if (!stored) {
        outcome.duplicates++;
        continue;
      }
      const profile = profiles.get(message.from);
      await this.touchContact(instance, message, profile?.user_id, profile?.profile?.name);
      outcome.newMessages.push({ instance, contact: message.from, wamid: message.id });
    }
    for (const status of value.statuses ?? []) {
      if (!status?.id || !status.status) continue;
      await this.applyStatus(instance, status);
      outcome.statuses++;
    }
  }

  private async hasActiveInstanceFor(channelAccountId: string | undefined): Promise<boolean> {
    if (!channelAccountId) return false;
    const rows = await this.db.query<unknown[]>(
      'SELECT 1 FROM instances WHERE channel_account_id = $1 AND is_active LIMIT 1',
      [channelAccountId],
    );
    return rows.length > 0;
  }

  /** Stores the message with its raw object; false when this wamid was stored before. */
  private async storeMessage(instance: Instance, message: InboundMessage): Promise<boolean> {
    const rows = await this.db.query<Array<{ id: string }>>(
      `INSERT INTO messages (instance_id, wamid, direction, contact, type, body, status, created_at)
       VALUES ($1, $2, 'inbound', $3, $4, $5, 'received', $6)
       ON CONFLICT (wamid) DO NOTHING
       RETURNING id`,
      [
        instance.id,
        message.id,
        message.from,
        typeof message.type === 'string' ? message.type : 'unknown',
        JSON.stringify(message),
        epochSeconds(message.timestamp),
      ],
    );
    return rows.length > 0;
  }

  /** Records who wrote and when; the time only moves forward (it opens the service window). */
  private async touchContact(
    instance: Instance,
    message: InboundMessage,
    userId: string | undefined,
    name: string | undefined,
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO contacts (instance_id, wa_id, user_id, name, last_inbound_at)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (instance_id, wa_id) DO UPDATE SET
         user_id = COALESCE(EXCLUDED.user_id, contacts.user_id),
         name = COALESCE(EXCLUDED.name, contacts.name),
         last_inbound_at = GREATEST(contacts.last_inbound_at, EXCLUDED.last_inbound_at),
         updated_at = now()`,
      [instance.id, message.from, userId ?? null, name ?? null, epochSeconds(message.timestamp)],
    );
  }

  /**
   * Applies a status to the stored message, never backwards. A status for a
   * wamid not stored yet (it can arrive before the send's answer) is kept on
   * a placeholder row that the send then completes.
   */
  private async applyStatus(instance: Instance, status: InboundStatus): Promise<void> {
    await this.db.query(
      `INSERT INTO messages (instance_id, wamid, direction, contact, type, body, status, errors)
       VALUES ($1, $2, 'outbound', $3, 'unknown', '{}'::jsonb, $4, $5)
       ON CONFLICT (wamid) DO UPDATE SET
         status = EXCLUDED.status,
         errors = COALESCE(EXCLUDED.errors, messages.errors),
         updated_at = now()
       WHERE ${STATUS_RANK_SQL('messages.status')} < ${STATUS_RANK_SQL('EXCLUDED.status')}`,
      [
        instance.id,
        status.id,
        status.recipient_id ?? '',
        status.status,
        Array.isArray(status.errors) ? JSON.stringify(status.errors) : null,
      ],
    );
  }

  /** Keeps every template event, and the latest status per template. */
  private async storeTemplateEvent(
    channelAccountId: string,
    time: number | undefined,
    value: TemplateStatusValue,
  ): Promise<void> {
    const templateId = String(value.message_template_id ?? '');
    if (!templateId || !value.event) return;
    const at = epochSeconds(time === undefined ? undefined : String(time));
    const params = [
      channelAccountId,
      templateId,
      value.message_template_name ?? null,
      value.message_template_language ?? null,
      value.event,
      value.reason ?? null,
      at,
    ];
    await this.db.query(
      `INSERT INTO template_events
         (channel_account_id, template_id, template_name, template_language, event, reason, event_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      params,
    );
    await this.db.query(
      `INSERT INTO templates
         (channel_account_id, template_id, template_name, template_language, status, reason, status_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (template_id) DO UPDATE SET
         template_name = COALESCE(EXCLUDED.template_name, templates.template_name),
         template_language = COALESCE(EXCLUDED.template_language, templates.template_language),
         status = EXCLUDED.status, reason = EXCLUDED.reason, status_at = EXCLUDED.status_at,
         updated_at = now()
       WHERE templates.status_at <= EXCLUDED.status_at`,
      params,
    );
  }
}
