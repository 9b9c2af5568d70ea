import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsISO8601,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
} from 'class-validator';
import { PageQueryDto } from '../../common/page-query.dto.js';
import {
  DELIVERY_STATES,
  EVENT_TYPES,
  type DeliveryState,
  type EventDeliveryRow,
  type EventSubscription,
  type EventType,
} from '../event.types.js';

const iso = (value: Date | null): string | null => value?.toISOString() ?? null;

const TYPES_MESSAGE = `must list one or more of ${EVENT_TYPES.join(', ')}`;

/** POST /admin/event-subscriptions */
export class CreateEventSubscriptionDto {
  @ApiProperty({
    description:
      'Where events are POSTed. https; http only for localhost outside production. It must not ' +
      'resolve to a loopback, private, link-local or metadata address (see EVENT_TARGET_ALLOWLIST)',
    example: 'https://crm.example.com/hooks/messaging',
    maxLength: 2048,
  })
  @IsString({ message: 'must be a URL' })
  @MaxLength(2048, { message: 'must be at most 2048 characters' })
  url: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description: "One instance's events; absent: every instance's",
  })
  @IsOptional()
  @IsUUID('all', { message: 'must be a UUID' })
  instance_id?: string;

  @ApiProperty({
    enum: EVENT_TYPES,
    isArray: true,
    example: ['message.received', 'message.status'],
  })
  @IsArray({ message: TYPES_MESSAGE })
  @ArrayMinSize(1, { message: TYPES_MESSAGE })
  @ArrayMaxSize(EVENT_TYPES.length, { message: TYPES_MESSAGE })
  @ArrayUnique({ message: 'must not repeat a type' })
  @IsIn(EVENT_TYPES, { each: true, message: TYPES_MESSAGE })
  event_types: EventType[];

  @ApiPropertyOptional({ maxLength: 500, example: 'CRM inbox' })
  @IsOptional()
  @IsString({ message: 'must be text' })
  @MaxLength(500, { message: 'must be at most 500 characters' })
  description?: string;

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean({ message: 'must be true or false' })
  enabled?: boolean;
}

/** PATCH /admin/event-subscriptions/{id}: the fields to change (the instance cannot change). */
export class UpdateEventSubscriptionDto {
  @ApiPropertyOptional({ maxLength: 2048, example: 'https://crm.example.com/hooks/v2' })
  @IsOptional()
  @IsString({ message: 'must be a URL' })
  @MaxLength(2048, { message: 'must be at most 2048 characters' })
  url?: string;

  @ApiPropertyOptional({ enum: EVENT_TYPES, isArray: true })
  @IsOptional()
  @IsArray({ message: TYPES_MESSAGE })
  @ArrayMinSize(1, { message: TYPES_MESSAGE })
  @ArrayMaxSize(EVENT_TYPES.length, { message: TYPES_MESSAGE })
  @ArrayUnique({ message: 'must not repeat a type' })
  @IsIn(EVENT_TYPES, { each: true, message: TYPES_MESSAGE })
  event_types?: EventType[];

  @ApiPropertyOptional({ maxLength: 500 })
  @IsOptional()
  @IsString({ message: 'must be text' })
  @MaxLength(500, { message: 'must be at most 500 characters' })
  description?: string;

  @ApiPropertyOptional({
    description:
      'false stops deliveries (events already waiting are kept); true resumes them and clears ' +
      'a disable by failures',
  })
  @IsOptional()
  @IsBoolean({ message: 'must be true or false' })
  enabled?: boolean;
}

export class EventSubscriptionDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'https://crm.example.com/hooks/messaging' }) url: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) instance_id: string | null;
  @ApiProperty({ enum: EVENT_TYPES, isArray: true }) event_types: string[];
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty() enabled: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Why it was disabled (by an admin, a 410 Gone, or a day of failures)',
  })
  disabled_reason: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When the current run of failed deliveries began; null while it delivers',
  })
  failing_since: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Until when the previous secret also signs, after a rotation',
  })
  previous_secret_expires_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;

  static from(subscription: EventSubscription, now = Date.now()): EventSubscriptionDto {
    const until = subscription.previous_secret_until;
    return {
      id: subscription.id,
      url: subscription.url,
      instance_id: subscription.instance_id,
      event_types: subscription.event_types,
      description: subscription.description,
      enabled: subscription.enabled,
      disabled_reason: subscription.enabled ? null : subscription.disabled_reason,
      failing_since: iso(subscription.failing_since),
      previous_secret_expires_at: until && until.getTime() > now ? until.toISOString() : null,
      created_at: subscription.created_at.toISOString(),
      updated_at: subscription.updated_at.toISOString(),
    };
  }
}

export class CreatedEventSubscriptionDto extends EventSubscriptionDto {
  @ApiProperty({
    description:
      'The signing secret (Standard Webhooks, `whsec_` + base64). Shown once: store it now',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  })
  secret: string;
}

export class RotatedSecretDto {
  @ApiProperty({ description: 'The new signing secret. Shown once', example: 'whsec_…' })
  secret: string;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'Until then deliveries carry a signature by each secret (EVENT_SECRET_GRACE_S); null: no grace',
  })
  previous_secret_expires_at: string | null;
}

export class ListEventDeliveriesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: DELIVERY_STATES })
  @IsOptional()
  @IsIn(DELIVERY_STATES, { message: `must be one of ${DELIVERY_STATES.join(', ')}` })
  state?: DeliveryState;
}

export class EventDeliveryDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid', description: 'The event (its webhook-id)' }) event_id: string;
  @ApiProperty({ example: 'message.received' }) event_type: string;
  @ApiProperty({ format: 'date-time' }) event_created_at: string;
  @ApiProperty({ enum: DELIVERY_STATES }) state: string;
  @ApiProperty({ type: 'integer' }) attempts: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) last_attempt_at:
    string | null;
  @ApiProperty({ type: 'integer', nullable: true, description: "The receiver's HTTP status" })
  last_status: number | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The start of the response body (up to 1 KiB)',
  })
  last_response: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Why the last attempt got no answer (timed out, target refused, no answer: …)',
  })
  last_error: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'Pending: when it is tried next (null while the subscription is disabled, or once delivered or failed)',
  })
  next_attempt_at: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) delivered_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;

  static from(row: EventDeliveryRow): EventDeliveryDto {
    const next = row.next_attempt_at;
    return {
      id: row.id,
      event_id: row.event_id,
      event_type: row.event_type,
      event_created_at: row.event_created_at.toISOString(),
      state: row.state,
      attempts: row.attempts,
      last_attempt_at: iso(row.last_attempt_at),
      last_status: row.last_status,
      last_response: row.last_response,
      last_error: row.last_error,
      next_attempt_at: next && Number.isFinite(next.getTime()) ? next.toISOString() : null,
      delivered_at: iso(row.delivered_at),
      created_at: row.created_at.toISOString(),
    };
  }
}

export class EventDeliveryPageDto {
  @ApiProperty({ type: [EventDeliveryDto] }) data: EventDeliveryDto[];
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Pass as `cursor` for the next page; null on the last one',
  })
  next_cursor: string | null;
}

export class ReplayEventsDto {
  @ApiProperty({ format: 'date-time', example: '2026-11-23T08:00:00Z' })
  @IsISO8601({ strict: true }, { message: 'must be an ISO 8601 date-time' })
  since: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Exclusive; absent: now' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'must be an ISO 8601 date-time' })
  until?: string;
}

export class ReplayResultDto {
  @ApiProperty({
    type: 'integer',
    description:
      'Events queued again for this subscription, oldest first, leaving out those still ' +
      'pending for it; at most 100000 per call (narrow the range when it says 100000)',
  })
  queued: number;
}

export class TestEventResultDto {
  @ApiProperty({ format: 'uuid' }) event_id: string;
  @ApiProperty({ format: 'uuid', description: 'Follow it in the deliveries list' })
  delivery_id: string;
}
