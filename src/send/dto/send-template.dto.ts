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
import { MediaDto } from './media.dto.js';
import { SendBaseDto } from './send-base.dto.js';

export const TEMPLATE_PARAMETER_TYPES = [
  'text',
  'currency',
  'date_time',
  'image',
  'document',
  'video',
  'payload',
] as const;

export class TemplateParameterDto {
  @ApiProperty({ enum: TEMPLATE_PARAMETER_TYPES, example: 'text' })
  @IsIn(TEMPLATE_PARAMETER_TYPES)
  type: (typeof TEMPLATE_PARAMETER_TYPES)[number];

  @ApiPropertyOptional({ example: 'Maria' })
  @IsOptional()
  @IsString()
  @Length(0, 32768)
  text?: string;

  @ApiPropertyOptional({ description: 'Quick-reply button payload' })
  @IsOptional()
  @IsString()
  @Length(1, 1000)
  payload?: string;

  @ApiPropertyOptional({ description: 'Named parameter (templates with named variables)' })
  @IsOptional()
  @IsString()
  @Length(1, 256)
  parameter_name?: string;

  @ApiPropertyOptional({
    description: 'As the platform takes it: fallback_value, code, amount_1000',
  })
  @IsOptional()
  @IsObject()
  currency?: Record<string, unknown>;

  @ApiPropertyOptional({ description: 'As the platform takes it: fallback_value' })
  @IsOptional()
  @IsObject()
  date_time?: Record<string, unknown>;

  @ApiPropertyOptional({ type: MediaDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => MediaDto)
  image?: MediaDto;

  @ApiPropertyOptional({ type: MediaDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => MediaDto)
  document?: MediaDto;

  @ApiPropertyOptional({ type: MediaDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => MediaDto)
  video?: MediaDto;
}

export const TEMPLATE_COMPONENT_TYPES = ['header', 'body', 'button', 'footer'] as const;

export class TemplateComponentDto {
  @ApiProperty({ enum: TEMPLATE_COMPONENT_TYPES, example: 'body' })
  @IsIn(TEMPLATE_COMPONENT_TYPES)
  type: (typeof TEMPLATE_COMPONENT_TYPES)[number];

  @ApiPropertyOptional({ example: 'quick_reply', description: 'For buttons: quick_reply, url…' })
  @IsOptional()
  @IsString()
  @Length(1, 32)
  sub_type?: string;

  @ApiPropertyOptional({ example: '0', description: 'For buttons: the button position' })
  @IsOptional()
  @IsString()
  @Matches(/^\d{1,2}$/, { message: 'must be a button position such as "0"' })
  index?: string;

  @ApiPropertyOptional({ type: [TemplateParameterDto] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => TemplateParameterDto)
  parameters?: TemplateParameterDto[];
}

export class SendTemplateDto extends SendBaseDto {
  @ApiProperty({ example: 'order_update', description: 'Name of an approved template' })
  @IsString()
  @Length(1, 512)
  template_name: string;

  @ApiPropertyOptional({ example: 'pt_BR', default: 'pt_BR' })
  @IsOptional()
  @IsString()
  @Matches(/^[a-z]{2,3}(_[A-Z]{2})?$/, { message: 'must be a locale such as en or pt_BR' })
  language?: string;

  @ApiPropertyOptional({ type: [TemplateComponentDto] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => TemplateComponentDto)
  components?: TemplateComponentDto[];
}
