import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  Equals,
  IsArray,
  IsDefined,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  Length,
  MaxLength,
  ValidateBy,
  ValidateIf,
  ValidateNested,
  type ValidationArguments,
} from 'class-validator';
import { SendBaseDto } from './send-base.dto.js';

export const INTERACTIVE_TYPES = ['buttons', 'list', 'cta_url'] as const;
export type InteractiveType = (typeof INTERACTIVE_TYPES)[number];

/**
 * A field of one interactive type: required for it when `required`, refused
 * for the others (so a misplaced field is an error, not silently dropped).
 */
function ForInteractiveType(type: InteractiveType, required: boolean): PropertyDecorator {
  return ValidateBy({
    name: 'forInteractiveType',
    validator: {
      validate: (value: unknown, args?: ValidationArguments) => {
        const own = (args?.object as { type?: unknown }).type === type;
        if (value === undefined || value === null) return !(own && required);
        return own;
      },
      defaultMessage: (args?: ValidationArguments) => {
        const own = (args?.object as { type?: unknown }).type === type;
        return own ? `is required for type ${type}` : `is only for type ${type}`;
      },
    },
  });
}

/** Validate the field when given, or when its interactive type requires it. */
function presentOrNeededFor(
  type: InteractiveType,
  required: boolean,
): (object: { type?: unknown }, value: unknown) => boolean {
  return (object, value) =>
    (value !== undefined && value !== null) || (required && object.type === type);
}

function TotalRowsBetween(min: number, max: number): PropertyDecorator {
  return ValidateBy({
    name: 'totalRowsBetween',
    validator: {
      validate: (value: unknown) => {
        if (!Array.isArray(value)) return true;
        const rows = value.reduce<number>(
          (sum, section: { rows?: unknown }) =>
            sum + (Array.isArray(section?.rows) ? section.rows.length : 0),
          0,
        );
        return rows >= min && rows <= max;
      },
      defaultMessage: () => `must hold ${min} to ${max} rows in all`,
    },
  });
}

export class InteractiveHeaderDto {
  @ApiProperty({ enum: ['text'] })
  @Equals('text', { message: 'must be text' })
  type: 'text';

  @ApiProperty({ maxLength: 60, example: 'Your order' })
  @IsString({ message: 'must be a string' })
  @Length(1, 60, { message: 'must be 1 to 60 characters' })
  text: string;
}

export class ReplyDto {
  @ApiProperty({ example: 'confirm', maxLength: 256 })
  @IsString({ message: 'must be a string' })
  @Length(1, 256, { message: 'must be 1 to 256 characters' })
  id: string;

  @ApiProperty({ example: 'Confirm', maxLength: 20 })
  @IsString({ message: 'must be a string' })
  @Length(1, 20, { message: 'must be 1 to 20 characters' })
  title: string;
}

export class ReplyButtonDto {
  @ApiProperty({ enum: ['reply'] })
  @Equals('reply', { message: 'must be reply' })
  type: 'reply';

  @ApiProperty({ type: ReplyDto })
  @IsDefined({ message: 'is required' })
  @IsObject({ message: 'must be an object' })
  @ValidateNested({ message: 'must be an object' })
  @Type(() => ReplyDto)
  reply: ReplyDto;
}

export class ListRowDto {
  @ApiProperty({ example: 'row-1', maxLength: 200 })
  @IsString({ message: 'must be a string' })
  @Length(1, 200, { message: 'must be 1 to 200 characters' })
  id: string;

  @ApiProperty({ example: 'Pizza', maxLength: 24 })
  @IsString({ message: 'must be a string' })
  @Length(1, 24, { message: 'must be 1 to 24 characters' })
  title: string;

  @ApiPropertyOptional({ maxLength: 72 })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @MaxLength(72, { message: 'must be at most 72 characters' })
  description?: string;
}

export class ListSectionDto {
  @ApiPropertyOptional({ example: 'Mains', maxLength: 24 })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Length(1, 24, { message: 'must be 1 to 24 characters' })
  title?: string;

  @ApiProperty({ type: [ListRowDto] })
  @IsArray({ message: 'must be an array' })
  @ArrayMinSize(1, { message: 'must hold at least 1 row' })
  @ValidateNested({ each: true, message: 'must be an object' })
  @Type(() => ListRowDto)
  rows: ListRowDto[];
}

export class SendInteractiveDto extends SendBaseDto {
  @ApiProperty({ enum: INTERACTIVE_TYPES })
  @IsIn(INTERACTIVE_TYPES, { message: `must be one of ${INTERACTIVE_TYPES.join(', ')}` })
  type: InteractiveType;

  @ApiProperty({ maxLength: 1024, example: 'Confirm your order?' })
  @IsString({ message: 'must be a string' })
  @Length(1, 1024, { message: 'must be 1 to 1024 characters' })
  body: string;

  @ApiPropertyOptional({ type: InteractiveHeaderDto })
  @IsOptional()
  @IsObject({ message: 'must be an object' })
  @ValidateNested({ message: 'must be an object' })
  @Type(() => InteractiveHeaderDto)
  header?: InteractiveHeaderDto;

  @ApiPropertyOptional({ maxLength: 60 })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Length(1, 60, { message: 'must be 1 to 60 characters' })
  footer?: string;

  @ApiPropertyOptional({ type: [ReplyButtonDto], description: 'type buttons: 1 to 3' })
  @ForInteractiveType('buttons', true)
  @ValidateIf(presentOrNeededFor('buttons', true))
  @IsArray({ message: 'must be an array' })
  @ArrayMinSize(1, { message: 'must hold 1 to 3 reply buttons' })
  @ArrayMaxSize(3, { message: 'must hold 1 to 3 reply buttons' })
  @ArrayUnique((button: ReplyButtonDto) => button?.reply?.id, {
    message: 'must not repeat a reply id',
  })
  @ValidateNested({ each: true, message: 'must be an object' })
  @Type(() => ReplyButtonDto)
  buttons?: ReplyButtonDto[];

  @ApiPropertyOptional({ maxLength: 20, default: 'Menu', description: 'type list' })
  @ForInteractiveType('list', false)
  @ValidateIf(presentOrNeededFor('list', false))
  @IsString({ message: 'must be a string' })
  @Length(1, 20, { message: 'must be 1 to 20 characters' })
  button_text?: string;

  @ApiPropertyOptional({ type: [ListSectionDto], description: 'type list: 1 to 10 sections' })
  @ForInteractiveType('list', true)
  @ValidateIf(presentOrNeededFor('list', true))
  @IsArray({ message: 'must be an array' })
  @ArrayMinSize(1, { message: 'must hold 1 to 10 sections' })
  @ArrayMaxSize(10, { message: 'must hold 1 to 10 sections' })
  @TotalRowsBetween(1, 10)
  @ValidateNested({ each: true, message: 'must be an object' })
  @Type(() => ListSectionDto)
  sections?: ListSectionDto[];

  @ApiPropertyOptional({ maxLength: 20, default: 'Acessar', description: 'type cta_url' })
  @ForInteractiveType('cta_url', false)
  @ValidateIf(presentOrNeededFor('cta_url', false))
  @IsString({ message: 'must be a string' })
  @Length(1, 20, { message: 'must be 1 to 20 characters' })
  display_text?: string;

  @ApiPropertyOptional({ example: 'https://example.com/order/42', description: 'type cta_url' })
  @ForInteractiveType('cta_url', true)
  @ValidateIf(presentOrNeededFor('cta_url', true))
  @IsUrl(
    { protocols: ['http', 'https'], require_protocol: true },
    { message: 'must be an http or https URL' },
  )
  url?: string;
}
