import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { IsBoolean, IsISO8601, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { InstanceScopedDto } from '../../common/instance-scoped.dto.js';
import { PageLimit, PageQueryDto } from '../../common/page-query.dto.js';
import { MessageErrorDto } from '../../messages/dto/message.dto.js';
import type { ConversationMessage } from '../../messages/message.store.js';
import { HANDOFF_BY, type Contact } from '../../messages/message.types.js';
import {
  arrivalPosition,
  EARLIER_VERSION_PATTERN,
  FOLLOW_PATTERN,
  POSITION_PATTERN,
} from '../conversation-cursors.js';

const SERVICE_WINDOW_MS = 24 * 60 * 60 * 1000;
const iso = (value: Date | null): string | null => value?.toISOString() ?? null;

/** GET /contacts */
export class ListContactsQueryDto extends IntersectionType(InstanceScopedDto, PageQueryDto) {
  @ApiPropertyOptional({
    description: 'A number prefix (digits) or the start of a name (any case)',
    example: '55119',
    maxLength: 64,
  })
  @IsOptional()
  @IsString({ message: 'must be text' })
  @MaxLength(64, { message: 'must be at most 64 characters' })
  q?: string;
}

const either = (one: RegExp, other: RegExp): RegExp =>
  new RegExp(`^(?:${one.source.slice(1, -1)}|${other.source.slice(1, -1)})$`);

/** GET /contacts/{key}/messages */
export class ConversationQueryDto extends InstanceScopedDto {
  @ApiPropertyOptional({
    description:
      "`older` of a page (or any message's `position`): the messages before it in arrival order",
    pattern: either(POSITION_PATTERN, EARLIER_VERSION_PATTERN).source,
  })
  @IsOptional()
  @Matches(either(POSITION_PATTERN, EARLIER_VERSION_PATTERN), {
    message: 'must be a cursor from older',
  })
  before?: string;

  @ApiPropertyOptional({
    description:
      '`newer` of a page: the messages stored since that page was read, each once (to follow a ' +
      'conversation)',
    pattern: either(FOLLOW_PATTERN, EARLIER_VERSION_PATTERN).source,
  })
  @IsOptional()
  @Matches(either(FOLLOW_PATTERN, EARLIER_VERSION_PATTERN), {
    message: 'must be a cursor from newer',
  })
  after?: string;

  @PageLimit(50)
  limit?: number;
}

/** POST /contacts/{key}/handoff */
export class StartHandoffDto extends InstanceScopedDto {
  @ApiPropertyOptional({
    format: 'date-time',
    description: 'When the agent may answer again by itself; absent: after HANDOFF_DEFAULT_S',
  })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'must be an ISO 8601 date-time' })
  until?: string;

  @ApiPropertyOptional({ maxLength: 500, example: 'a complaint: the manager answers' })
  @IsOptional()
  @IsString({ message: 'must be text' })
  @MaxLength(500, { message: 'must be at most 500 characters' })
  reason?: string;
}

/** DELETE /contacts/{key}/handoff */
export class EndHandoffDto extends InstanceScopedDto {
  @ApiPropertyOptional({
    default: false,
    description:
      'Give the agent the messages that came during the pause (else they stay unanswered by it)',
  })
  @IsOptional()
  @IsBoolean({ message: 'must be true or false' })
  include_pending?: boolean;
}

export class ServiceWindowDto {
  @ApiProperty({ description: 'Whether a non-template message may be sent now' }) open: boolean;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: '24 hours after the last inbound message',
  })
  until: string | null;
}

export class HandoffDto {
  @ApiProperty({ description: 'Whether the agent is paused for this contact now' }) active: boolean;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) until: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) since: string | null;
  @ApiProperty({ type: String, nullable: true }) reason: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    enum: HANDOFF_BY,
    description:
      'Who paused or resumed it last: a client, an admin, the agent, a person sending (auto), the clock (timer)',
  })
  by: string | null;
}

export class ContactDto {
  @ApiProperty({ type: String, nullable: true, example: '5511999990000' }) wa_id: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'BR.1234567890ABCDEF' }) user_id:
    string | null;
  @ApiProperty({ type: String, nullable: true, example: 'Ana' }) name: string | null;
  @ApiProperty({ type: String, nullable: true }) username: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) last_inbound_at:
    string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) last_outbound_at:
    string | null;
  @ApiProperty({ type: ServiceWindowDto }) window: ServiceWindowDto;
  @ApiProperty({ type: HandoffDto }) handoff: HandoffDto;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Set while the contact has opted out (a stop word): only templates may be sent',
  })
  opted_out_at: string | null;

  static from(contact: Contact, now = Date.now()): ContactDto {
    const windowUntil = contact.last_inbound_at
      ? contact.last_inbound_at.getTime() + SERVICE_WINDOW_MS
      : null;
    const until = contact.handoff_until;
    const active = until !== null && until.getTime() > now;
    return {
      wa_id: contact.wa_id,
      user_id: contact.user_id,
      name: contact.name,
      username: contact.username,
      last_inbound_at: iso(contact.last_inbound_at),
      last_outbound_at: iso(contact.last_outbound_at),
      window: {
        open: windowUntil !== null && windowUntil > now,
        until: windowUntil === null ? null : new Date(windowUntil).toISOString(),
      },
      handoff: {
        active,
        until: active ? iso(until) : null,
        since: active ? iso(contact.handoff_since) : null,
        reason: contact.handoff_reason,
        by: contact.handoff_by,
      },
      opted_out_at: iso(contact.opted_out_at),
    };
  }
}

export class ContactPageDto {
  @ApiProperty({ type: [ContactDto] }) data: ContactDto[];
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Pass as `cursor` for the next page; null on the last one',
  })
  next_cursor: string | null;
}

export class ConversationMessageDto {
  @ApiProperty() wamid: string;
  @ApiProperty({ enum: ['inbound', 'outbound'] }) direction: string;
  @ApiProperty({ example: 'text' }) type: string;
  @ApiProperty({ enum: ['received', 'sent', 'delivered', 'read', 'failed'] }) status: string;
  @ApiProperty({ type: [MessageErrorDto], nullable: true }) errors: unknown[] | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: "Inbound: the platform's message object. Outbound: the send as it was made",
  })
  content: Record<string, unknown>;
  @ApiProperty({
    type: String,
    nullable: true,
    enum: ['api', 'agent'],
    description: 'Outbound: a client (or person) through /send, or the agent',
  })
  sent_by: string | null;
  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'Inbound: the agent turn it went to (null: not given to the agent)',
  })
  turn_id: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({
    example: '0069315ba0006451d64628d39000000000000002a',
    description:
      'Its place in arrival order: positions sort as strings the way the conversation does. ' +
      'A message stored late (its delivery was slower than a later one) can come in a later ' +
      '`after` page than messages it sorts before: place it by this. Also taken as `before`.',
  })
  position: string;

  static from(message: ConversationMessage): ConversationMessageDto {
    return {
      wamid: message.wamid,
      direction: message.direction,
      type: message.type,
      status: message.status,
      errors: message.errors,
      content: message.body,
      sent_by: message.direction === 'outbound' ? (message.sent_by ?? 'api') : null,
      turn_id: message.turn_id,
      created_at: message.created_at.toISOString(),
      updated_at: message.updated_at.toISOString(),
      position: arrivalPosition(message),
    };
  }
}

export class ConversationPageDto {
  @ApiProperty({ type: ContactDto }) contact: ContactDto;
  @ApiProperty({
    type: [ConversationMessageDto],
    description:
      'In arrival order, oldest first (an `after` page: the messages stored since its cursor, ' +
      'in arrival order among themselves)',
  })
  data: ConversationMessageDto[];
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'Pass as `before` for the older messages: the `position` of the first; null when there are none',
  })
  older: string | null;
  @ApiProperty({
    example: '813402.0',
    description:
      'Pass as `after` to get the messages stored since this page was read, and again with each ' +
      "page's `newer` to follow the conversation: each message once, none skipped (the first " +
      '`after` page may repeat one this page showed)',
  })
  newer: string;
}
