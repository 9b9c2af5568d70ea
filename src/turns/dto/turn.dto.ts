import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsUUID, Matches } from 'class-validator';
import { PageQueryDto } from '../../common/page-query.dto.js';
import {
  PART_STATES,
  TURN_STATES,
  type PartState,
  type TurnPartRow,
  type TurnState,
} from '../turn-states.js';
import type { TurnWithContact } from '../turn.store.js';

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

/** One reply part of a turn's answer. */
export class TurnPartDto {
  @ApiProperty({ description: 'Order in the answer, from 0' }) position: number;
  @ApiProperty({ example: 'text', description: 'The /send route it goes through' }) kind: string;
  @ApiProperty({ enum: PART_STATES }) status: PartState;
  @ApiProperty({ type: String, nullable: true, description: 'Set once the platform took it' })
  wamid: string | null;
  @ApiProperty({ type: String, nullable: true }) error: string | null;
  @ApiProperty({ description: 'Attempts made to send it' }) attempts: number;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The /send body, without to',
  })
  body: Record<string, unknown>;

  static from(part: TurnPartRow): TurnPartDto {
    return {
      position: part.position,
      kind: part.kind,
      status: part.status,
      wamid: part.wamid,
      error: part.error,
      attempts: part.attempts,
      body: part.body,
    };
  }
}

/** Who a turn is with: the contact's keys (either may be null) and profile. */
export class TurnContactDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ type: String, nullable: true, example: '5511999990000' }) wa_id: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'BR.1234567890ABCDEF' })
  user_id: string | null;
  @ApiProperty({ type: String, nullable: true }) username: string | null;
  @ApiProperty({ type: String, nullable: true }) name: string | null;
}

/** A turn: a contact's messages given to the agent, and its answer's parts. */
export class TurnDto {
  @ApiProperty({ format: 'uuid', description: 'Also the agent payload’s batch_id' }) id: string;
  @ApiProperty({ format: 'uuid' }) instance_id: string;
  @ApiProperty({ type: TurnContactDto }) contact: TurnContactDto;
  @ApiProperty({ enum: TURN_STATES }) status: TurnState;
  @ApiProperty({ description: 'Agent calls made' }) attempts: number;
  @ApiProperty({ type: String, nullable: true }) last_error: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When a retry is due',
  })
  next_attempt_at: string | null;
  @ApiProperty({ type: [String], description: 'The wamids of its messages, in the order given' })
  message_ids: string[];
  @ApiProperty({ type: [TurnPartDto] }) parts: TurnPartDto[];
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) completed_at: string | null;

  static from(turn: TurnWithContact, messageIds: string[], parts: TurnPartRow[]): TurnDto {
    return {
      id: turn.id,
      instance_id: turn.instance_id,
      contact: {
        id: turn.contact_id,
        wa_id: turn.contact_wa_id,
        user_id: turn.contact_user_id,
        username: turn.contact_username,
        name: turn.contact_name,
      },
      status: turn.status,
      attempts: turn.attempts,
      last_error: turn.last_error,
      next_attempt_at: iso(turn.next_attempt_at),
      message_ids: messageIds,
      parts: parts.map((part) => TurnPartDto.from(part)),
      created_at: turn.created_at.toISOString(),
      updated_at: turn.updated_at.toISOString(),
      completed_at: iso(turn.completed_at),
    };
  }
}

export class TurnPageDto {
  @ApiProperty({ type: [TurnDto] }) data: TurnDto[];
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Pass as `cursor` for the next page; null on the last one',
  })
  next_cursor: string | null;
}

/** GET /admin/turns filters, newest first. */
export class ListTurnsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: TURN_STATES })
  @IsOptional()
  @IsIn(TURN_STATES, { message: `must be one of ${TURN_STATES.join(', ')}` })
  status?: TurnState;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all', { message: 'must be a UUID' })
  instance_id?: string;

  @ApiPropertyOptional({
    description: "The contact's number (wa_id) or user id",
    example: '5511999990000',
  })
  @IsOptional()
  @Matches(/^(\d{1,32}|[A-Z]{2}\.[A-Za-z0-9._-]{1,125})$/, {
    message: 'must be a number (digits) or a user id like BR.1234567890ABCDEF',
  })
  contact?: string;
}
