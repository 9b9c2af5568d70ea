import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, IsUUID, Length } from 'class-validator';
import type { ApiKey } from '../../auth/api-key.types.js';

export class CreateApiKeyDto {
  @ApiProperty({ example: 'crm-integration' })
  @IsString({ message: 'must be a string' })
  @Length(1, 200, { message: 'must be 1 to 200 characters' })
  name: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description: 'Bind the key to this instance: it then works for it only',
  })
  @IsOptional()
  @IsUUID('all', { message: 'must be a UUID' })
  instance_id?: string;
}

export class ApiKeyDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) instance_id: string | null;
  @ApiProperty({ example: 'mck_AbCdEfGh', description: 'The first characters of the key' })
  prefix: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) last_used_at: string | null;

  static from(key: ApiKey): ApiKeyDto {
    return {
      id: key.id,
      name: key.name,
      instance_id: key.instance_id,
      prefix: key.prefix,
      created_at: key.created_at.toISOString(),
      last_used_at: key.last_used_at ? key.last_used_at.toISOString() : null,
    };
  }
}

export class CreatedApiKeyDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) instance_id: string | null;
  @ApiProperty({ description: 'The key itself: shown this once, store it now' }) key: string;
  @ApiProperty() prefix: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}
