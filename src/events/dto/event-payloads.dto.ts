import {
  ApiProperty,
  ApiPropertyOptional,
  getSchemaPath,
  type OperationObject,
} from '@nestjs/swagger';
import { PersonDto, PersonProperty } from '../../accounts/dto/person.dto.js';
import { HANDOFF_BY } from '../../contacts/contact.types.js';
import { MessageErrorDto } from '../../messages/dto/message.dto.js';

/** The documentation of what subscribers receive: these classes are schemas only. */

export class EventContactDto {
  @ApiProperty({ type: String, nullable: true, example: '5511999990000' }) wa_id: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'BR.1234567890ABCDEF' }) user_id:
    string | null;
  @ApiProperty({ type: String, nullable: true, example: 'Ana' }) name: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) username?: string | null;
}

/** A message as GET /messages/{wamid} shows it, with its content. */
export class EventMessageDto {
  @ApiProperty() wamid: string;
  @ApiProperty({ format: 'uuid' }) instance_id: string;
  @ApiProperty({ enum: ['outbound', 'inbound'] }) direction: string;
  @ApiProperty({ description: "The other party's address as the message named it" })
  contact: string;
  @ApiProperty({ type: String, nullable: true }) wa_id: string | null;
  @ApiProperty({ type: String, nullable: true }) user_id: string | null;
  @ApiProperty({ example: 'text' }) type: string;
  @ApiProperty({ enum: ['sent', 'delivered', 'read', 'failed', 'received'] }) status: string;
  @ApiProperty({ type: [MessageErrorDto], nullable: true }) errors: unknown[] | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      "Inbound: the platform's message object (text, image, interactive reply, …). " +
      'Outbound: the send as the client (or the agent) made it. Empty on a status that ' +
      'arrived before its send was recorded',
  })
  content: Record<string, unknown>;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class MessageReceivedDataDto {
  @ApiProperty({ type: EventMessageDto }) message: EventMessageDto;
  @ApiProperty({ type: EventContactDto }) contact: EventContactDto;
}

export class MessageSentDataDto extends MessageReceivedDataDto {
  @ApiProperty({
    enum: ['api', 'agent', 'person', 'phone_app'],
    description:
      'Who sent it: a client through /send (api), the agent answering a turn, or a person who ' +
      'logged in (person)',
  })
  sent_by: string;
  @PersonProperty('The person who sent it (sent_by person)')
  sent_by_account: PersonDto | null;
}

export class MessageStatusDataDto extends MessageReceivedDataDto {
  @ApiProperty({
    enum: ['sent', 'delivered', 'read', 'failed'],
    description: 'Statuses only move forward: a late "delivered" after "read" sends nothing',
  })
  status: string;
  @ApiProperty({ type: String, nullable: true, example: 'delivered' }) previous_status:
    string | null;
}

export class TemplateStatusDataDto {
  @ApiProperty({ example: '1234567890' }) template_id: string;
  @ApiProperty({ type: String, nullable: true, example: 'order_update' }) name: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'pt_BR' }) language: string | null;
  @ApiProperty({
    enum: ['status', 'quality', 'category'],
    description:
      'What changed: its status, its quality score, or its category (announced a day ahead: ' +
      '`reason` is `announced`, then made)',
  })
  change: string;
  @ApiProperty({
    example: 'APPROVED',
    description: 'APPROVED, REJECTED, PAUSED, DISABLED, …: the new one, or the current one',
  })
  status: string;
  @ApiProperty({ type: String, nullable: true }) reason: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'YELLOW',
    description: 'A quality change: the new score',
  })
  quality: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'MARKETING',
    description: 'A category change: the new category',
  })
  category: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'UTILITY' }) previous_category:
    string | null;
  @ApiProperty() channel_account_id: string;
  @ApiProperty({ format: 'date-time' }) at: string;
}

export class CampaignTemplateRefDto {
  @ApiProperty({ example: '1234567890' }) id: string;
  @ApiProperty({ example: 'autumn_sale' }) name: string;
  @ApiProperty({ example: 'pt_BR' }) language: string;
}

export class CampaignStatusDataDto {
  @ApiProperty({ format: 'uuid' }) campaign_id: string;
  @ApiProperty({ example: 'Autumn sale' }) name: string;
  @ApiProperty({ enum: ['draft', 'scheduled', 'running', 'paused', 'completed', 'cancelled'] })
  state: string;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'running',
    description: 'The state it left (one of those of `state`); null when it was just created',
  })
  previous_state: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'template_paused',
    description:
      'Why it paused: requested, token_rejected, instance_inactive, template_paused, ' +
      'template_disabled, template_not_approved, template_not_found, template_category_changed',
  })
  pause_reason: string | null;
  @ApiProperty({ type: CampaignTemplateRefDto }) template: CampaignTemplateRefDto;
  @ApiProperty({
    type: 'integer',
    description: 'Recipients in the list (after duplicates and invalid ones)',
  })
  recipients: number;
  @ApiProperty({ type: 'integer' }) duplicates: number;
  @ApiProperty({ type: 'integer' }) invalid: number;
  @ApiProperty({
    type: 'object',
    nullable: true,
    additionalProperties: { type: 'integer' },
    example: { sent: 4980, skipped: 12, failed: 8 },
    description:
      'On completed and cancelled: the recipients by state (queued, sent, failed, skipped)',
  })
  counts: Record<string, number> | null;
  @ApiProperty({ format: 'date-time' }) at: string;
}

export class TurnFailedDataDto {
  @ApiProperty({ format: 'uuid', description: 'Retry it with POST /admin/turns/{id}/retry' })
  turn_id: string;
  @ApiProperty({ type: String, nullable: true }) error: string | null;
  @ApiProperty({ type: 'integer' }) attempts: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ type: EventContactDto }) contact: EventContactDto;
}

export class InstanceStatusDataDto {
  @ApiProperty({
    enum: ['activated', 'deactivated', 'token_rejected'],
    description:
      'token_rejected: the platform refused the access token (code 190) on some call; ' +
      'sends fail until PATCH /admin/instances/{id} sets a new one',
  })
  status: string;
  @ApiProperty() name: string;
  @ApiProperty() phone_number_id: string;
  @ApiProperty({ type: String, nullable: true }) display_phone_number: string | null;
  @ApiProperty() is_active: boolean;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) token_rejected_at:
    string | null;
}

export class ContactHandoffDataDto {
  @ApiProperty({ description: 'Whether the agent is paused for the contact after this change' })
  paused: boolean;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) until: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) since: string | null;
  @ApiProperty({ type: String, nullable: true }) reason: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    enum: HANDOFF_BY,
    description:
      'Who changed it: a client, an admin, a person who logged in, the agent, a send by a ' +
      'client or a person (auto), the clock',
  })
  by: string | null;
  @PersonProperty('The person who changed it (by person, or auto for their send)')
  account: PersonDto | null;
  @ApiProperty({ type: EventContactDto }) contact: EventContactDto;
}

export class PingDataDto {
  @ApiProperty({ format: 'uuid' }) subscription_id: string;
  @ApiProperty({ example: 'test event' }) message: string;
}

/** What every event carries beside its type and data. */
abstract class EventBaseDto {
  @ApiProperty({
    format: 'uuid',
    description: 'Stable: also the webhook-id header, the same on every retry and replay',
  })
  id: string;
  @ApiProperty({ format: 'date-time', description: 'When the change happened' })
  created_at: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) instance_id: string | null;
}

export class MessageReceivedEventDto extends EventBaseDto {
  @ApiProperty({ enum: ['message.received'] }) type: string;
  @ApiProperty({ type: MessageReceivedDataDto }) data: MessageReceivedDataDto;
}

export class MessageStatusEventDto extends EventBaseDto {
  @ApiProperty({ enum: ['message.status'] }) type: string;
  @ApiProperty({ type: MessageStatusDataDto }) data: MessageStatusDataDto;
}

export class MessageSentEventDto extends EventBaseDto {
  @ApiProperty({ enum: ['message.sent'] }) type: string;
  @ApiProperty({ type: MessageSentDataDto }) data: MessageSentDataDto;
}

export class TemplateStatusEventDto extends EventBaseDto {
  @ApiProperty({ enum: ['template.status'] }) type: string;
  @ApiProperty({ type: TemplateStatusDataDto }) data: TemplateStatusDataDto;
}

export class TurnFailedEventDto extends EventBaseDto {
  @ApiProperty({ enum: ['turn.failed'] }) type: string;
  @ApiProperty({ type: TurnFailedDataDto }) data: TurnFailedDataDto;
}

export class InstanceStatusEventDto extends EventBaseDto {
  @ApiProperty({ enum: ['instance.status'] }) type: string;
  @ApiProperty({ type: InstanceStatusDataDto }) data: InstanceStatusDataDto;
}

export class ContactHandoffEventDto extends EventBaseDto {
  @ApiProperty({ enum: ['contact.handoff'] }) type: string;
  @ApiProperty({ type: ContactHandoffDataDto }) data: ContactHandoffDataDto;
}

export class CampaignStatusEventDto extends EventBaseDto {
  @ApiProperty({ enum: ['campaign.status'] }) type: string;
  @ApiProperty({ type: CampaignStatusDataDto }) data: CampaignStatusDataDto;
}

export class HistoryImportedDataDto {
  @ApiProperty({
    type: 'integer',
    example: 1,
    description: "The platform's phase: 0 (day 0-1), 1 (day 1-90), 2 (day 90-180)",
  })
  phase: number;
  @ApiProperty({ type: 'integer', example: 3 }) chunk_order: number;
  @ApiProperty({
    type: 'integer',
    example: 40,
    description: 'How far the platform says the history sync is, in percent',
  })
  progress: number;
  @ApiProperty({ type: 'integer', example: 100, description: 'Messages the chunk held' })
  messages: number;
  @ApiProperty({
    type: 'integer',
    example: 100,
    description: 'Of those, stored now (new to the service)',
  })
  stored: number;
  @ApiProperty({ format: 'date-time' }) at: string;
}

export class HistoryImportedEventDto extends EventBaseDto {
  @ApiProperty({ enum: ['history.imported'] }) type: string;
  @ApiProperty({ type: HistoryImportedDataDto }) data: HistoryImportedDataDto;
}

export class PingEventDto extends EventBaseDto {
  @ApiProperty({ enum: ['ping'] }) type: string;
  @ApiProperty({ type: PingDataDto }) data: PingDataDto;
}

/** Each event type and the body a subscriber receives for it. */
export const EVENT_BODIES = {
  'message.received': MessageReceivedEventDto,
  'message.status': MessageStatusEventDto,
  'message.sent': MessageSentEventDto,
  'template.status': TemplateStatusEventDto,
  'turn.failed': TurnFailedEventDto,
  'instance.status': InstanceStatusEventDto,
  'contact.handoff': ContactHandoffEventDto,
  'campaign.status': CampaignStatusEventDto,
  'history.imported': HistoryImportedEventDto,
  ping: PingEventDto,
};

/**
 * The OpenAPI callbacks of POST /admin/event-subscriptions: one POST to the
 * subscription's URL per event type, with its body and headers.
 */
export function eventCallbacks(): NonNullable<OperationObject['callbacks']> {
  const header = (description: string, example: string) => ({
    required: true,
    description,
    schema: { type: 'string' as const, example },
  });
  return Object.fromEntries(
    Object.entries(EVENT_BODIES).map(([type, body]) => [
      type,
      {
        '{$request.body#/url}': {
          post: {
            summary: `The ${type} event`,
            operationId: `event${type.replace(/(^|\.)(\w)/g, (_, _dot: string, c: string) => c.toUpperCase())}`,
            security: [],
            parameters: [
              {
                name: 'webhook-id',
                in: 'header' as const,
                ...header('The event id: the same on every retry', EXAMPLE_EVENT_ID),
              },
              {
                name: 'webhook-timestamp',
                in: 'header' as const,
                ...header('Unix seconds when this attempt was signed', '1795456800'),
              },
              {
                name: 'webhook-signature',
                in: 'header' as const,
                ...header(
                  '`v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` under ' +
                    'the secret; two, space-separated, during a rotation',
                  'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
                ),
              },
            ],
            requestBody: {
              required: true,
              content: { 'application/json': { schema: { $ref: getSchemaPath(body) } } },
            },
            responses: {
              '2XX': { description: 'Delivered' },
              '410': { description: 'Gone: the subscription is disabled' },
              '4XX': { description: 'Not delivered: retried on EVENT_RETRY_SCHEDULE_S' },
              '5XX': {
                description:
                  'Not delivered: retried on EVENT_RETRY_SCHEDULE_S (Retry-After honoured on 503, and on 429)',
              },
            },
          },
        },
      },
    ]),
  );
}

const EXAMPLE_EVENT_ID = '0b7e8a52-5a4c-4d5e-9b1f-3c2d1e0f9a87';
