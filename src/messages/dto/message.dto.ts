import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PersonDto, PersonProperty } from '../../accounts/dto/person.dto.js';
import type { StoredMessage } from '../message.types.js';

/** The detail of a status error. */
export class MessageErrorDataDto {
  @ApiProperty({
    example:
      'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
  })
  details: string;
}

/** One error of a failed status, as the platform reports it. */
export class MessageErrorDto {
  @ApiProperty({ type: 'integer', example: 131047 }) code: number;
  @ApiProperty({ example: 'Re-engagement message' }) title: string;
  @ApiPropertyOptional({ example: 'Re-engagement message' }) message?: string;
  @ApiPropertyOptional({ type: MessageErrorDataDto }) error_data?: MessageErrorDataDto;
  @ApiPropertyOptional({ description: "A link to the platform's explanation" }) href?: string;
}

export class MessageDto {
  @ApiProperty() wamid: string;
  @ApiProperty({ format: 'uuid' }) instance_id: string;
  @ApiProperty({ enum: ['outbound', 'inbound'] }) direction: string;
  @ApiProperty({
    description:
      "The other party's address as the message named it: its number, or its business-scoped " +
      'user id when the number is hidden',
    example: '5511999990000',
  })
  contact: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The contact's number, when known",
    example: '5511999990000',
  })
  wa_id: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The contact's business-scoped user id, when known",
    example: 'BR.1234567890ABCDEF',
  })
  user_id: string | null;
  @ApiProperty({ example: 'text' }) type: string;
  @ApiProperty({ enum: ['sent', 'delivered', 'read', 'failed', 'received'] }) status: string;
  @ApiProperty({
    type: [MessageErrorDto],
    nullable: true,
    description: "A failed message's errors, as the platform's status gave them",
  })
  errors: unknown[] | null;
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
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;

  static from(message: StoredMessage): MessageDto {
    return {
      wamid: message.wamid,
      instance_id: message.instance_id,
      direction: message.direction,
      contact: message.contact,
      wa_id: message.contact_wa_id,
      user_id: message.contact_user_id,
      type: message.type,
      status: message.status,
      errors: message.errors,
      sent_by: message.direction === 'outbound' ? (message.sent_by ?? 'api') : null,
      sent_by_account: PersonDto.of(message.sent_by_account_id, message.sent_by_account_name),
      created_at: message.created_at.toISOString(),
      updated_at: message.updated_at.toISOString(),
    };
  }
}
