import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { InstanceScopedDto } from '../../common/instance-scoped.dto.js';
import { PageQueryDto } from '../../common/page-query.dto.js';
import { TemplateComponentDto } from './template-send.dto.js';
import { asText, templateSlots, type TemplateSlot } from '../template-params.js';
import type { CatalogueTemplate } from '../template.types.js';

export const TEMPLATE_CATEGORIES = ['MARKETING', 'UTILITY', 'AUTHENTICATION'] as const;
export const TEMPLATE_STATUSES = [
  'APPROVED',
  'PENDING',
  'REJECTED',
  'PAUSED',
  'DISABLED',
  'IN_APPEAL',
  'PENDING_DELETION',
  'DELETED',
  'LIMIT_EXCEEDED',
  'ARCHIVED',
] as const;
const LOCALE = /^[a-z]{2,3}(_[A-Z]{2})?$/;
const LOCALE_MESSAGE = 'must be a locale such as en or pt_BR';
const upper = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' ? value.toUpperCase() : value;
const lower = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' ? value.toLowerCase() : value;

/** GET /templates */
export class ListTemplatesQueryDto extends IntersectionType(InstanceScopedDto, PageQueryDto) {
  @ApiPropertyOptional({ description: 'Names starting with this', example: 'order_' })
  @IsOptional()
  @IsString({ message: 'must be text' })
  @MaxLength(512, { message: 'must be at most 512 characters' })
  name?: string;

  @ApiPropertyOptional({ example: 'pt_BR' })
  @IsOptional()
  @Matches(LOCALE, { message: LOCALE_MESSAGE })
  language?: string;

  @ApiPropertyOptional({ enum: TEMPLATE_STATUSES, description: 'Any case' })
  @IsOptional()
  @Transform(upper)
  @IsIn(TEMPLATE_STATUSES, { message: `must be one of ${TEMPLATE_STATUSES.join(', ')}` })
  status?: string;

  @ApiPropertyOptional({ enum: TEMPLATE_CATEGORIES, description: 'Any case' })
  @IsOptional()
  @Transform(upper)
  @IsIn(TEMPLATE_CATEGORIES, { message: `must be one of ${TEMPLATE_CATEGORIES.join(', ')}` })
  category?: string;
}

/** DELETE /templates/{name} */
export class DeleteTemplateQueryDto extends InstanceScopedDto {
  @ApiPropertyOptional({
    example: 'pt_BR',
    description: 'Delete this language only; absent: every language of the name',
  })
  @IsOptional()
  @Matches(LOCALE, { message: LOCALE_MESSAGE })
  language?: string;
}

/** POST /templates/{id}/preview */
export class PreviewTemplateDto extends InstanceScopedDto {
  @ApiPropertyOptional({
    type: [TemplateComponentDto],
    description: "The parameters, as /send/template's `components` takes them",
  })
  @IsOptional()
  @IsArray({ message: 'must be an array' })
  @ArrayMaxSize(20, { message: 'must hold at most 20 components' })
  @ValidateNested({ each: true, message: 'must be an object' })
  @Type(() => TemplateComponentDto)
  components?: TemplateComponentDto[];
}

export const DRAFT_COMPONENT_TYPES = ['HEADER', 'BODY', 'FOOTER', 'BUTTONS'] as const;
export const HEADER_FORMATS = ['TEXT', 'IMAGE', 'VIDEO', 'DOCUMENT', 'LOCATION'] as const;
export const BUTTON_TYPES = [
  'QUICK_REPLY',
  'URL',
  'PHONE_NUMBER',
  'COPY_CODE',
  'OTP',
  'FLOW',
] as const;

export class TemplateButtonDraftDto {
  @ApiProperty({ enum: BUTTON_TYPES, example: 'QUICK_REPLY', description: 'Any case' })
  @Transform(upper)
  @IsIn(BUTTON_TYPES, { message: `must be one of ${BUTTON_TYPES.join(', ')}` })
  type: (typeof BUTTON_TYPES)[number];

  @ApiProperty({ example: 'Track my order', maxLength: 25 })
  @IsString({ message: 'must be text' })
  @Length(1, 25, { message: 'must be 1 to 25 characters' })
  text: string;

  @ApiPropertyOptional({
    example: 'https://shop.example.com/orders/{{1}}',
    description: 'URL buttons; one variable at the end at most',
  })
  @IsOptional()
  @IsString({ message: 'must be text' })
  @Length(1, 2000, { message: 'must be 1 to 2000 characters' })
  url?: string;

  @ApiPropertyOptional({ example: '+5511999990000' })
  @IsOptional()
  @IsString({ message: 'must be text' })
  @Matches(/^\+?\d{6,20}$/, { message: 'must be a phone number such as +5511999990000' })
  phone_number?: string;

  @ApiPropertyOptional({
    type: [String],
    description: "URL buttons with a variable: the variable's example; COPY_CODE: the code",
  })
  @IsOptional()
  @IsArray({ message: 'must be an array of text' })
  @ArrayMaxSize(1, { message: 'must hold one example' })
  @IsString({ each: true, message: 'must be an array of text' })
  example?: string[];

  /** FLOW buttons: passed on as given. */
  @ApiPropertyOptional({ description: 'FLOW buttons: the flow' })
  @IsOptional()
  @IsString({ message: 'must be text' })
  @MaxLength(64, { message: 'must be at most 64 characters' })
  flow_id?: string;
}

export class TemplateComponentDraftDto {
  @ApiProperty({ enum: DRAFT_COMPONENT_TYPES, example: 'BODY', description: 'Any case' })
  @Transform(upper)
  @IsIn(DRAFT_COMPONENT_TYPES, { message: `must be one of ${DRAFT_COMPONENT_TYPES.join(', ')}` })
  type: (typeof DRAFT_COMPONENT_TYPES)[number];

  @ApiPropertyOptional({ enum: HEADER_FORMATS, description: 'Headers; TEXT by default' })
  @IsOptional()
  @Transform(upper)
  @IsIn(HEADER_FORMATS, { message: `must be one of ${HEADER_FORMATS.join(', ')}` })
  format?: (typeof HEADER_FORMATS)[number];

  @ApiPropertyOptional({
    example: 'Hi {{1}}, your order {{2}} is on its way.',
    description: 'Variables are {{1}}, {{2}}… or {{name}} (parameter_format named)',
  })
  @IsOptional()
  @IsString({ message: 'must be text' })
  @Length(1, 1024, { message: 'must be 1 to 1024 characters' })
  text?: string;

  @ApiPropertyOptional({
    description:
      "The variables' example values, as the platform takes them: `header_text` [..], " +
      '`body_text` [[..]], `header_handle` [..] (a media header), `header_text_named_params` / ' +
      '`body_text_named_params` [{param_name, example}]',
    example: { body_text: [['Maria', '#1042']] },
  })
  @IsOptional()
  @IsObject({ message: 'must be an object' })
  example?: Record<string, unknown>;

  @ApiPropertyOptional({ type: [TemplateButtonDraftDto] })
  @IsOptional()
  @IsArray({ message: 'must be an array' })
  @ArrayMinSize(1, { message: 'must hold at least one button' })
  @ArrayMaxSize(10, { message: 'must hold at most 10 buttons' })
  @ValidateNested({ each: true, message: 'must be an object' })
  @Type(() => TemplateButtonDraftDto)
  buttons?: TemplateButtonDraftDto[];
}

/** POST /templates */
export class CreateTemplateDto extends InstanceScopedDto {
  @ApiProperty({
    example: 'order_shipped',
    description: 'Lowercase letters, digits and underscores',
  })
  @IsString({ message: 'must be text' })
  @Matches(/^[a-z0-9_]{1,512}$/, {
    message: 'must be 1 to 512 lowercase letters, digits or underscores',
  })
  name: string;

  @ApiProperty({ example: 'pt_BR' })
  @IsString({ message: LOCALE_MESSAGE })
  @Matches(LOCALE, { message: LOCALE_MESSAGE })
  language: string;

  @ApiProperty({ enum: TEMPLATE_CATEGORIES, example: 'UTILITY', description: 'Any case' })
  @Transform(upper)
  @IsIn(TEMPLATE_CATEGORIES, { message: `must be one of ${TEMPLATE_CATEGORIES.join(', ')}` })
  category: (typeof TEMPLATE_CATEGORIES)[number];

  @ApiPropertyOptional({ enum: ['positional', 'named'], default: 'positional' })
  @IsOptional()
  @Transform(lower)
  @IsIn(['positional', 'named'], { message: 'must be positional or named' })
  parameter_format?: 'positional' | 'named';

  @ApiProperty({ type: [TemplateComponentDraftDto] })
  @IsArray({ message: 'must be an array' })
  @ArrayMinSize(1, { message: 'must hold a BODY component' })
  @ArrayMaxSize(4, { message: 'must hold at most 4 components (header, body, footer, buttons)' })
  @ValidateNested({ each: true, message: 'must be an object' })
  @Type(() => TemplateComponentDraftDto)
  components: TemplateComponentDraftDto[];
}

export class TemplateSlotDto {
  @ApiProperty({ enum: ['header', 'body', 'button'] }) component: string;
  @ApiPropertyOptional({ type: 'integer', description: "A button's position" }) index?: number;
  @ApiProperty({ enum: ['text', 'image', 'video', 'document', 'coupon_code'] }) kind: string;
  @ApiProperty({
    type: [String],
    example: ['1', '2'],
    description: "The variables a send gives, in order ('1', '2', or names)",
  })
  names: string[];
  @ApiProperty({ type: [String], description: "The template's example values, in that order" })
  examples: string[];
}

/** A variable's example values as the template's components give them. */
function examplesOf(template: CatalogueTemplate, slot: TemplateSlot): string[] {
  if (slot.component === 'button') {
    // A button's example is its own (a URL's full example, or the coupon code).
    const buttons = (template.components ?? []).find(
      (candidate) => String(candidate.type).toUpperCase() === 'BUTTONS',
    )?.buttons;
    const button = buttons?.[slot.index ?? -1];
    const example = button?.example;
    const first = asText(Array.isArray(example) ? (example as unknown[])[0] : example);
    if (!first) return [];
    // A URL's example is the whole URL: what a send fills is the part after the fixed prefix.
    const prefix = asText(button?.url).split('{{')[0];
    return [prefix && first.startsWith(prefix) ? first.slice(prefix.length) : first];
  }
  const component = (template.components ?? []).find(
    (candidate) => String(candidate.type).toUpperCase() === slot.component.toUpperCase(),
  );
  const example = component?.example ?? {};
  const named = example[`${slot.component}_text_named_params`];
  if (Array.isArray(named)) {
    return slot.names.map((name) => {
      const found = (named as Array<{ param_name?: string; example?: unknown }>).find(
        (entry) => entry.param_name === name,
      );
      return asText(found?.example);
    });
  }
  const values = example[`${slot.component}_text`];
  const flat = Array.isArray(values) ? (Array.isArray(values[0]) ? values[0] : values) : [];
  return (flat as unknown[]).map(asText);
}

export class TemplateDto {
  @ApiProperty({ example: '1234567890', description: "The platform's template id" }) id: string;
  @ApiProperty({ type: String, nullable: true, example: 'order_update' }) name: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'pt_BR' }) language: string | null;
  @ApiProperty({ example: 'APPROVED', description: 'APPROVED, PENDING, REJECTED, PAUSED, …' })
  status: string;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'UTILITY',
    description: 'MARKETING, UTILITY or AUTHENTICATION',
  })
  category: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'positional',
    description: 'positional ({{1}}) or named ({{first_name}})',
  })
  parameter_format: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'GREEN',
    description: 'GREEN, YELLOW, RED, UNKNOWN',
  })
  quality: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Why it was rejected or paused, as the platform said',
  })
  reason: string | null;
  @ApiProperty({ type: String, nullable: true }) previous_category: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The category the platform announced it will move the template to',
  })
  pending_category: string | null;
  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    nullable: true,
    description:
      'HEADER, BODY, FOOTER, BUTTONS as the platform describes them, examples included; null for a template known only from a webhook so far',
  })
  components: Array<Record<string, unknown>> | null;
  @ApiProperty({ type: [TemplateSlotDto], description: 'What a send must fill' })
  parameters: TemplateSlotDto[];
  @ApiProperty({ format: 'date-time' }) status_at: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) synced_at: string | null;

  static from(template: CatalogueTemplate): TemplateDto {
    const slots = templateSlots(template.components ?? []);
    return {
      id: template.id,
      name: template.name,
      language: template.language,
      status: template.status,
      category: template.category,
      parameter_format: template.parameterFormat,
      quality: template.quality,
      reason: template.reason,
      previous_category: template.previousCategory,
      pending_category: template.pendingCategory,
      components: template.components,
      parameters: slots.map((slot) => ({
        component: slot.component,
        ...(slot.index === undefined ? {} : { index: slot.index }),
        kind: slot.kind,
        names: slot.names,
        examples: examplesOf(template, slot),
      })),
      status_at: template.statusAt.toISOString(),
      synced_at: template.syncedAt?.toISOString() ?? null,
    };
  }
}

export class TemplatePageDto {
  @ApiProperty({ type: [TemplateDto] }) data: TemplateDto[];
  @ApiProperty({ type: String, nullable: true }) next_cursor: string | null;
}

export class TemplateSyncDto {
  @ApiProperty({ type: 'integer', description: 'Templates the platform listed' }) templates: number;
  @ApiProperty({ type: 'integer', description: 'Templates no longer on the platform, removed' })
  removed: number;
}

export class TemplateButtonViewDto {
  @ApiProperty({ example: 'url' }) type: string;
  @ApiProperty() text: string;
  @ApiPropertyOptional() url?: string;
  @ApiPropertyOptional() phone_number?: string;
}

export class TemplatePreviewDto {
  @ApiProperty({ type: String, nullable: true }) header: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "A media header's type (image, video, document, location)",
  })
  header_media: string | null;
  @ApiProperty({ example: 'Hi Maria, your order #1042 is on its way.' }) body: string;
  @ApiProperty({ type: String, nullable: true }) footer: string | null;
  @ApiProperty({ type: [TemplateButtonViewDto] }) buttons: TemplateButtonViewDto[];
}

export class DeletedTemplatesDto {
  @ApiProperty({ type: [String], description: 'The catalogue ids removed' }) deleted: string[];
}
