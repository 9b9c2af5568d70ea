import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsISO8601, IsOptional, IsString, MaxLength } from 'class-validator';
import { InstanceScopedDto } from '../../common/instance-scoped.dto.js';
import { PageQueryDto } from '../../common/page-query.dto.js';
import { PersonDto, PersonProperty } from '../../accounts/dto/person.dto.js';
import { UNREAD_CAP, type ContactSummary } from '../contact-summaries.js';
import { CONTACT_STATES, HANDOFF_BY, type Contact, type ContactState } from '../contact.types.js';

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

  @ApiPropertyOptional({
    enum: CONTACT_STATES,
    description:
      'Only contacts that are: `waiting` (the agent handed them to a person, still paused), ' +
      '`paused` (the agent paused, by anyone), `agent` (the agent answers: not paused, not opted ' +
      'out), `window_open` (the 24-hour window is open), `opted_out`',
  })
  @IsOptional()
  @IsIn(CONTACT_STATES, { message: `must be one of ${CONTACT_STATES.join(', ')}` })
  state?: ContactState;
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

/** POST /contacts/{key}/read */
export class MarkReadDto extends InstanceScopedDto {
  @ApiProperty({
    description:
      'The newest message of the conversation the person saw: the mark moves to it, never back',
    example: 'wamid.HBgMNTUxMTk5OTk5MDAwFQIAEhggQTNCRjA5',
  })
  @IsString({ message: 'must be text' })
  @MaxLength(256, { message: 'must be at most 256 characters' })
  wamid: string;
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
      'Who paused or resumed it last: a client, an admin, a person who logged in, the agent, a ' +
      'send by a client or a person (auto), the clock (timer)',
  })
  by: string | null;
  @PersonProperty('The person who did (by person, or auto for their send)')
  account: PersonDto | null;
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
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      "What the list is sorted by: the contact's last message either way, or its imported history's latest (null: no message yet, e.g. a number the phone book added)",
  })
  last_activity_at: string | null;
  @ApiProperty({ type: ServiceWindowDto }) window: ServiceWindowDto;
  @ApiProperty({ type: HandoffDto }) handoff: HandoffDto;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Set while the contact has opted out (a stop word): only templates may be sent',
  })
  opted_out_at: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'Set while the customer has stopped marketing messages in the app (user_preferences, or a send refused with 131050): marketing templates are refused and campaigns pass over them',
  })
  marketing_opted_out_at: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      "The contact's name in the owner's phone address book (a number shared with the phone app); `name` is it only while the customer's own profile gives none",
  })
  phone_name: string | null;

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
      last_activity_at:
        contact.last_activity_at.getTime() <= 0 ? null : iso(contact.last_activity_at),
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
        account: PersonDto.of(contact.handoff_account_id, contact.handoff_account_name),
      },
      opted_out_at: iso(contact.opted_out_at),
      marketing_opted_out_at: iso(contact.marketing_opted_out_at),
      phone_name: contact.phone_name,
    };
  }
}

/** A message in a line: a list's last message, a reply's quoted message. */
export class MessageLineDto {
  @ApiProperty() wamid: string;
  @ApiProperty({ enum: ['inbound', 'outbound'] }) direction: 'inbound' | 'outbound';
  @ApiProperty({ example: 'text' }) type: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Its text, caption or file name (the first 120 characters); null when none',
  })
  text: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    enum: ['api', 'agent', 'person', 'phone_app'],
    description: 'Outbound: who sent it',
  })
  sent_by: string | null;
}

export class LastMessageDto extends MessageLineDto {
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

/** A contact as an inbox's list shows it: GET /contacts, and the live stream's events. */
export class ContactListItemDto extends ContactDto {
  @ApiProperty({
    description: `Inbound messages since a person last read the conversation (POST /contacts/{key}/read), at most ${UNREAD_CAP}`,
    example: 2,
  })
  unread: number;
  @ApiProperty({ type: LastMessageDto, nullable: true, description: 'In arrival order' })
  last_message: LastMessageDto | null;

  static withSummary(contact: Contact, summary: ContactSummary | undefined): ContactListItemDto {
    return {
      ...ContactDto.from(contact),
      unread: summary?.unread ?? 0,
      last_message: summary?.last_message ?? null,
    };
  }
}

export class ContactPageDto {
  @ApiProperty({ type: [ContactListItemDto] }) data: ContactListItemDto[];
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Pass as `cursor` for the next page; null on the last one',
  })
  next_cursor: string | null;
}
