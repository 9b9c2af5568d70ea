import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  ValidateNested,
} from 'class-validator';

/** A template send's components, as /send/template, previews and campaigns take them. */
import { MediaDto } from '../../common/media.dto.js';

export const TEMPLATE_PARAMETER_TYPES = [
  'text',
  'currency',
  'date_time',
  'image',
  'document',
  'video',
  'payload',
  'coupon_code',
  'action',
] as const;

/**
 * A currency parameter's fields as the platform takes them (the API
 * description's; the service passes the object on unchanged).
 */
export class TemplateCurrencyDto {
  @ApiProperty({ example: 'R$ 12,50', description: 'Shown where the currency cannot be' })
  fallback_value: string;

  @ApiProperty({ example: 'BRL', description: 'ISO 4217 currency code' })
  code: string;

  @ApiProperty({ type: 'integer', example: 12500, description: 'The amount times 1000' })
  amount_1000: number;
}

/**
 * A date_time parameter's fields as the platform takes them (the API
 * description's; the service passes the object on unchanged).
 */
export class TemplateDateTimeDto {
  @ApiProperty({ example: '23 de novembro de 2026', description: 'The date as shown' })
  fallback_value: string;
}

export class TemplateParameterDto {
  @ApiProperty({ enum: TEMPLATE_PARAMETER_TYPES, example: 'text' })
  @IsIn(TEMPLATE_PARAMETER_TYPES, {
    message: `must be one of ${TEMPLATE_PARAMETER_TYPES.join(', ')}`,
  })
  type: (typeof TEMPLATE_PARAMETER_TYPES)[number];

  @ApiPropertyOptional({ example: 'Maria' })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Length(0, 32768, { message: 'must be at most 32768 characters' })
  text?: string;

  @ApiPropertyOptional({ description: 'Quick-reply button payload' })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Length(1, 1000, { message: 'must be 1 to 1000 characters' })
  payload?: string;

  @ApiPropertyOptional({
    example: 'OUTONO25',
    description: "For type coupon_code: a copy-code button's code (up to 15 characters)",
  })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Length(1, 15, { message: 'must be 1 to 15 characters' })
  coupon_code?: string;

  @ApiPropertyOptional({
    example: { flow_token: 'order-1042', flow_action_data: { order: '1042' } },
    description:
      "For type action: a flow button's flow_token and flow_action_data, passed as given",
  })
  @IsOptional()
  @IsObject({ message: 'must be an object' })
  action?: Record<string, unknown>;

  @ApiPropertyOptional({ description: 'Named parameter (templates with named variables)' })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Length(1, 256, { message: 'must be 1 to 256 characters' })
  parameter_name?: string;

  @ApiPropertyOptional({
    type: () => TemplateCurrencyDto,
    description: 'For type currency; passed to the platform as given',
  })
  @IsOptional()
  @IsObject({ message: 'must be an object' })
  currency?: Record<string, unknown>;

  @ApiPropertyOptional({
    type: () => TemplateDateTimeDto,
    description: 'For type date_time; passed to the platform as given',
  })
  @IsOptional()
  @IsObject({ message: 'must be an object' })
  date_time?: Record<string, unknown>;

  @ApiPropertyOptional({ type: MediaDto })
  @IsOptional()
  @IsObject({ message: 'must be an object' })
  @ValidateNested({ message: 'must be an object' })
  @Type(() => MediaDto)
  image?: MediaDto;

  @ApiPropertyOptional({ type: MediaDto })
  @IsOptional()
  @IsObject({ message: 'must be an object' })
  @ValidateNested({ message: 'must be an object' })
  @Type(() => MediaDto)
  document?: MediaDto;

  @ApiPropertyOptional({ type: MediaDto })
  @IsOptional()
  @IsObject({ message: 'must be an object' })
  @ValidateNested({ message: 'must be an object' })
  @Type(() => MediaDto)
  video?: MediaDto;
}

export const TEMPLATE_COMPONENT_TYPES = ['header', 'body', 'button', 'footer'] as const;

export class TemplateComponentDto {
  @ApiProperty({ enum: TEMPLATE_COMPONENT_TYPES, example: 'body' })
  @IsIn(TEMPLATE_COMPONENT_TYPES, {
    message: `must be one of ${TEMPLATE_COMPONENT_TYPES.join(', ')}`,
  })
  type: (typeof TEMPLATE_COMPONENT_TYPES)[number];

  @ApiPropertyOptional({ example: 'quick_reply', description: 'For buttons: quick_reply, url…' })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Length(1, 32, { message: 'must be 1 to 32 characters' })
  sub_type?: string;

  @ApiPropertyOptional({ example: '0', description: 'For buttons: the button position' })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Matches(/^\d{1,2}$/, { message: 'must be a button position such as "0"' })
  index?: string;

  @ApiPropertyOptional({ type: [TemplateParameterDto] })
  @IsOptional()
  @IsArray({ message: 'must be an array' })
  @ArrayMaxSize(100, { message: 'must hold at most 100 parameters' })
  @ValidateNested({ each: true, message: 'must be an object' })
  @Type(() => TemplateParameterDto)
  parameters?: TemplateParameterDto[];
}
