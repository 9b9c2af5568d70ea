import { ApiProperty, ApiPropertyOptional, IntersectionType, OmitType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsISO8601,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  ValidateBy,
  ValidateNested,
} from 'class-validator';
import { InstanceScopedDto } from '../../common/instance-scoped.dto.js';
import { PageLimit, PageQueryDto } from '../../common/page-query.dto.js';
import { TemplateComponentDto } from '../../templates/dto/template-send.dto.js';
import {
  CAMPAIGN_STATES,
  type Campaign,
  type CampaignProgress,
  type CampaignRecipient,
} from '../campaign.types.js';

/**
 * The most recipients a JSON body may list: parsed and checked whole, a body
 * must fit the api process's heap (160 MiB in production) many times over.
 */
export const MAX_JSON_RECIPIENTS = 10_000;
/** A JSON campaign body's limit (10,000 recipients with a few parameters each). */
export const CAMPAIGN_BODY_LIMIT_BYTES = 2 * 1024 * 1024;

const RECIPIENT_VIEW_STATES = ['queued', 'sending', 'sent', 'failed', 'skipped'] as const;

/** An object of text values (a recipient's parameters), 50 at most, each up to 1024 characters. */
function IsTextMap(): PropertyDecorator {
  return ValidateBy({
    name: 'isTextMap',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'object' &&
        value !== null &&
        !Array.isArray(value) &&
        Object.keys(value).length <= 50 &&
        Object.values(value).every((v) => typeof v === 'string' && v.length <= 1024),
      defaultMessage: () => 'must be an object of at most 50 text values (each ≤ 1024 characters)',
    },
  });
}

export class CampaignRecipientDto {
  @ApiPropertyOptional({
    example: '5511999990000',
    description: 'The number, with the country code (spaces, dashes and + are dropped)',
  })
  @IsOptional()
  @IsString({ message: 'must be text' })
  @Length(1, 32, { message: 'must be 1 to 32 characters' })
  to?: string;

  @ApiPropertyOptional({ example: 'BR.1234567890ABCDEF', description: 'A business-scoped user id' })
  @IsOptional()
  @IsString({ message: 'must be text' })
  @Length(1, 128, { message: 'must be 1 to 128 characters' })
  recipient?: string;

  @ApiPropertyOptional({
    example: { '1': 'Maria', '2': '2 dias', 'header.1': '#1042', 'button.0': '1042' },
    description:
      "The template's variables for this recipient: `1`, `2`… (or names) for the body, " +
      '`header.1` (or `header.name`) for the header, `button.0` for a URL button, a code button or a copy-code button (its coupon)',
  })
  @IsOptional()
  @IsTextMap()
  parameters?: Record<string, string>;
}

/** POST /campaigns */
export class CreateCampaignDto extends InstanceScopedDto {
  @ApiProperty({ example: 'Autumn sale', maxLength: 200 })
  @IsString({ message: 'must be text' })
  @Length(1, 200, { message: 'must be 1 to 200 characters' })
  name: string;

  @ApiProperty({ example: 'shipping_update', description: 'An approved template of the catalogue' })
  @IsString({ message: 'must be text' })
  @Length(1, 512, { message: 'must be 1 to 512 characters' })
  template_name: string;

  @ApiPropertyOptional({ example: 'pt_BR', description: 'pt_BR when left out' })
  @IsOptional()
  @Matches(/^[a-z]{2,3}(_[A-Z]{2})?$/, { message: 'must be a locale such as en or pt_BR' })
  language?: string;

  @ApiPropertyOptional({
    type: [TemplateComponentDto],
    description:
      "Components every recipient gets, as /send/template takes them (a media header, a value the same for all); a recipient's own `parameters` fill the rest",
  })
  @IsOptional()
  @IsArray({ message: 'must be an array' })
  @ArrayMaxSize(20, { message: 'must hold at most 20 components' })
  @ValidateNested({ each: true, message: 'must be an object' })
  @Type(() => TemplateComponentDto)
  components?: TemplateComponentDto[];

  @ApiProperty({
    type: [CampaignRecipientDto],
    description: `1 to ${MAX_JSON_RECIPIENTS}; each with exactly one of \`to\` and \`recipient\`. Duplicates and invalid numbers are counted and left out`,
  })
  @IsArray({ message: 'must be an array' })
  @ArrayMinSize(1, { message: 'must hold at least one recipient' })
  @ArrayMaxSize(MAX_JSON_RECIPIENTS, {
    message: `must hold at most ${MAX_JSON_RECIPIENTS} recipients`,
  })
  @ValidateNested({ each: true, message: 'must be an object' })
  @Type(() => CampaignRecipientDto)
  recipients: CampaignRecipientDto[];

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'Started campaigns wait until then (scheduled)',
  })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'must be an ISO 8601 date-time' })
  start_at?: string;

  @ApiPropertyOptional({
    example: 20,
    description:
      "The most sends a second; absent: as fast as the number's pacing allows (its conversations go first either way)",
  })
  @IsOptional()
  @IsNumber({}, { message: 'must be a number from 0.1 to 1000' })
  @Min(0.1, { message: 'must be a number from 0.1 to 1000' })
  @Max(1000, { message: 'must be a number from 0.1 to 1000' })
  rate_per_s?: number;

  @ApiPropertyOptional({ default: false, description: 'Start it at once (else it stays a draft)' })
  @IsOptional()
  @IsBoolean({ message: 'must be true or false' })
  start?: boolean;
}

/** The most recipients a CSV upload may list. */
export const MAX_CSV_RECIPIENTS = 1_000_000;
/** A CSV file's limit: a million rows of a number and a few parameters. */
export const MAX_CSV_BYTES = 256 * 1024 * 1024;

/** Which of the CSV's columns (by their header) fill what. */
export class CsvColumnsDto {
  @ApiPropertyOptional({ example: 'phone', description: "The column of each recipient's number" })
  @IsOptional()
  @IsString({ message: 'must be text' })
  @Length(1, 200, { message: 'must be 1 to 200 characters' })
  to?: string;

  @ApiPropertyOptional({
    example: 'user_id',
    description: 'The column of business-scoped user ids (used on rows whose `to` cell is empty)',
  })
  @IsOptional()
  @IsString({ message: 'must be text' })
  @Length(1, 200, { message: 'must be 1 to 200 characters' })
  recipient?: string;

  @ApiPropertyOptional({
    example: { '1': 'first_name', 'button.0': 'order' },
    description:
      "The template's variables (as a recipient's `parameters` names them) and the column each is read from",
  })
  @IsOptional()
  @IsTextMap()
  parameters?: Record<string, string>;
}

/** The `campaign` field of POST /campaigns/upload: POST /campaigns without its recipients. */
export class CsvCampaignDto extends OmitType(CreateCampaignDto, ['recipients', 'instance_id']) {
  @ApiProperty({ type: CsvColumnsDto })
  @IsObject({ message: 'must be an object' })
  @ValidateNested({ message: 'must be an object' })
  @Type(() => CsvColumnsDto)
  columns: CsvColumnsDto;
}

/** GET /campaigns */
export class ListCampaignsQueryDto extends IntersectionType(InstanceScopedDto, PageQueryDto) {}

/** GET /campaigns/{id}/recipients */
export class ListRecipientsQueryDto extends InstanceScopedDto {
  @ApiPropertyOptional({ enum: RECIPIENT_VIEW_STATES })
  @IsOptional()
  @IsIn(RECIPIENT_VIEW_STATES, { message: `must be one of ${RECIPIENT_VIEW_STATES.join(', ')}` })
  state?: string;

  @ApiPropertyOptional({ description: 'next_cursor of the previous page' })
  @IsOptional()
  @Matches(/^\d{1,9}$/, { message: 'must be a cursor from next_cursor' })
  cursor?: string;

  @PageLimit(50)
  limit?: number;
}

export class CampaignProgressDto {
  @ApiProperty({ type: 'integer', description: 'Not sent yet' }) queued: number;
  @ApiProperty({ type: 'integer', description: 'Being sent now' }) sending: number;
  @ApiProperty({ type: 'integer', description: 'Accepted by the platform (and not failed since)' })
  sent: number;
  @ApiProperty({ type: 'integer' }) failed: number;
  @ApiProperty({ type: 'integer' }) skipped: number;
  @ApiProperty({ type: 'integer', description: 'Of the sent: delivered (or read)' })
  delivered: number;
  @ApiProperty({ type: 'integer', description: 'Of the sent: read' }) read: number;
  @ApiProperty({ type: 'integer', description: 'Of the sent: wrote back after the send' })
  replied: number;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    example: { '131049': 3, '131026': 1, send_uncertain: 1 },
    description:
      "The failed by the platform's code (or `send_uncertain`: a worker stopped mid-send)",
  })
  failed_by_code: Record<string, number>;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    example: { opted_out: 12 },
  })
  skipped_by_reason: Record<string, number>;
}

export class CampaignTemplateDto {
  @ApiProperty({ example: '1234567890' }) id: string;
  @ApiProperty({ example: 'shipping_update' }) name: string;
  @ApiProperty({ example: 'pt_BR' }) language: string;
  @ApiProperty({ type: String, nullable: true, example: 'UTILITY' }) category: string | null;
}

export class CampaignDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: CAMPAIGN_STATES }) state: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'Why it paused: requested, token_rejected, instance_inactive, template_paused, template_disabled, template_not_approved, template_not_found, template_category_changed',
  })
  pause_reason: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description:
      "Running but waiting: daily_limit while the campaigns' share of the business's daily limit on new customers is used up (it goes on as the 24 hours roll)",
  })
  waiting_for: string | null;
  @ApiProperty({ type: CampaignTemplateDto }) template: CampaignTemplateDto;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) start_at: string | null;
  @ApiProperty({ type: Number, nullable: true }) rate_per_s: number | null;
  @ApiProperty({ type: 'integer', description: 'Recipients kept from the list' })
  recipients: number;
  @ApiProperty({ type: 'integer', description: 'Left out: listed twice' }) duplicates: number;
  @ApiProperty({ type: 'integer', description: 'Left out: not a number or user id' })
  invalid: number;
  @ApiProperty({ type: CampaignProgressDto }) progress: CampaignProgressDto;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) started_at: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) finished_at: string | null;

  static from(
    campaign: Campaign,
    progress: CampaignProgress,
    waitingFor: string | null = null,
  ): CampaignDto {
    return {
      id: campaign.id,
      name: campaign.name,
      state: campaign.state,
      pause_reason: campaign.pause_reason,
      waiting_for: waitingFor,
      template: {
        id: campaign.template_id,
        name: campaign.template_name,
        language: campaign.template_language,
        category: campaign.template_category,
      },
      start_at: campaign.start_at?.toISOString() ?? null,
      rate_per_s: campaign.rate_per_s,
      recipients: campaign.recipients,
      duplicates: campaign.duplicates,
      invalid: campaign.invalid,
      progress,
      created_at: campaign.created_at.toISOString(),
      started_at: campaign.started_at?.toISOString() ?? null,
      finished_at: campaign.finished_at?.toISOString() ?? null,
    };
  }
}

export class CampaignPageDto {
  @ApiProperty({ type: [CampaignDto] }) data: CampaignDto[];
  @ApiProperty({ type: String, nullable: true }) next_cursor: string | null;
}

export class RecipientDto {
  @ApiProperty({ type: 'integer', description: 'Its place in the list, from 1' }) seq: number;
  @ApiProperty({ type: String, nullable: true }) to: string | null;
  @ApiProperty({ type: String, nullable: true }) recipient: string | null;
  @ApiProperty({ enum: RECIPIENT_VIEW_STATES }) state: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'Skipped: why (opted_out, marketing_opted_out, cancelled); failed: send_uncertain, platform_rejected or retries_exhausted',
  })
  reason: string | null;
  @ApiProperty({ type: 'integer', nullable: true, example: 131026 }) error_code: number | null;
  @ApiProperty({ type: String, nullable: true }) error_message: string | null;
  @ApiProperty({ type: String, nullable: true }) wamid: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) sent_at: string | null;
  @ApiProperty({
    type: 'integer',
    example: 0,
    description:
      'Tries the platform refused for now (not counting an outage or a throttled number); the 10th fails it, retries_exhausted',
  })
  attempts: number;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Queued but not tried again before then',
  })
  retry_at: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'read',
    description:
      "The sent message's status as the platform last reported it: sent, delivered, read or failed (then `state` is failed, with the platform's code)",
  })
  delivery: string | null;
  @ApiProperty({
    type: 'object',
    nullable: true,
    additionalProperties: { type: 'string' },
  })
  parameters: Record<string, string> | null;

  static from(recipient: CampaignRecipient): RecipientDto {
    return {
      seq: recipient.seq,
      to: recipient.to_number,
      recipient: recipient.user_id,
      state: recipient.state === 'claimed' ? 'queued' : recipient.state,
      reason: recipient.reason,
      error_code: recipient.error_code,
      error_message: recipient.error_message,
      wamid: recipient.wamid,
      sent_at: recipient.sent_at?.toISOString() ?? null,
      attempts: recipient.attempts,
      retry_at: recipient.retry_at?.toISOString() ?? null,
      delivery: recipient.delivery ?? null,
      parameters: recipient.parameters,
    };
  }
}

export class RecipientPageDto {
  @ApiProperty({ type: [RecipientDto] }) data: RecipientDto[];
  @ApiProperty({ type: String, nullable: true }) next_cursor: string | null;
}

/** Exactly one of `to` and `recipient` on each recipient. */
export function recipientAddressErrors(
  recipients: CampaignRecipientDto[],
): Array<{ field: string; message: string }> {
  return recipients.flatMap((recipient, index) =>
    (recipient.to === undefined) === (recipient.recipient === undefined)
      ? [{ field: `recipients[${index}]`, message: 'must have exactly one of to and recipient' }]
      : [],
  );
}
