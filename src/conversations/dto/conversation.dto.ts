import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, Matches } from 'class-validator';
import { PersonDto, PersonProperty } from '../../accounts/dto/person.dto.js';
import { InstanceScopedDto } from '../../common/instance-scoped.dto.js';
import { PageLimit } from '../../common/page-query.dto.js';
import { ContactDto, MessageLineDto } from '../../contacts/dto/contact.dto.js';
import { MessageErrorDto } from '../../messages/dto/message.dto.js';
import type { ConversationMessage } from '../../messages/message.store.js';
import { TURN_STATES } from '../../turns/turn-states.js';
import {
  arrivalPosition,
  EARLIER_VERSION_PATTERN,
  FOLLOW_PATTERN,
  POSITION_PATTERN,
} from '../conversation-cursors.js';

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
    enum: ['api', 'agent', 'person', 'phone_app'],
    description:
      'Outbound: a client through /send (api), the agent, or a person who logged in (person)',
  })
  sent_by: string | null;
  @PersonProperty('The person who sent it (sent_by person)')
  sent_by_account: PersonDto | null;
  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'Inbound: the agent turn it went to (null: not given to the agent)',
  })
  turn_id: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    enum: TURN_STATES,
    description:
      'The state of that turn: `failed` when the agent could not answer it (an admin reads why in GET /admin/turns/{id}: the error may name internal addresses)',
  })
  turn_status: string | null;
  @ApiProperty({
    type: MessageLineDto,
    nullable: true,
    description:
      'The message it replies to (inbound: the platform’s context; outbound: the send’s reply_to), when it is in this conversation',
  })
  quoted: MessageLineDto | null;
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

  @ApiProperty({
    description:
      'Imported history (a number shared with the phone app): it started no turn and opened no window',
  })
  imported: boolean;

  static from(message: ConversationMessage): ConversationMessageDto {
    return {
      imported: message.imported,
      wamid: message.wamid,
      direction: message.direction,
      type: message.type,
      status: message.status,
      errors: message.errors,
      content: message.body,
      sent_by: message.direction === 'outbound' ? (message.sent_by ?? 'api') : null,
      sent_by_account: PersonDto.of(message.sent_by_account_id, message.sent_by_account_name),
      turn_id: message.turn_id,
      turn_status: message.turn_id ? message.turn_status : null,
      quoted: message.quoted,
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
