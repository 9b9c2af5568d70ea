import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsOptional,
  IsString,
  Length,
  Matches,
  ValidateNested,
} from 'class-validator';
import { TemplateComponentDto } from '../../templates/dto/template-send.dto.js';
import { SendBaseDto } from './send-base.dto.js';

export class SendTemplateDto extends SendBaseDto {
  @ApiProperty({ example: 'order_update', description: 'Name of an approved template' })
  @IsString({ message: 'must be a string' })
  @Length(1, 512, { message: 'must be 1 to 512 characters' })
  template_name: string;

  // No `default` here: generated clients (openapi-typescript) would make the field required.
  @ApiPropertyOptional({
    example: 'pt_BR',
    description: 'The template language; pt_BR when left out',
  })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Matches(/^[a-z]{2,3}(_[A-Z]{2})?$/, { message: 'must be a locale such as en or pt_BR' })
  language?: string;

  @ApiPropertyOptional({ type: [TemplateComponentDto] })
  @IsOptional()
  @IsArray({ message: 'must be an array' })
  @ArrayMaxSize(20, { message: 'must hold at most 20 components' })
  @ValidateNested({ each: true, message: 'must be an object' })
  @Type(() => TemplateComponentDto)
  components?: TemplateComponentDto[];
}
