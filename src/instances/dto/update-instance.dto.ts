import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsEmpty,
  IsIn,
  IsOptional,
  IsString,
  Length,
  Matches,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { UpdateAgentSettingsDto } from './agent-settings.dto.js';
import { PLATFORM_ID_MESSAGE, PLATFORM_ID_PATTERN } from '../../common/platform-id.js';
import { TOKEN_TYPES, type TokenType } from '../instance.types.js';

/** The fields PATCH may change; a new access_token is checked with the platform. */
export class UpdateInstanceDto {
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Length(1, 200, { message: 'must be 1 to 200 characters' })
  name?: string;

  @ApiPropertyOptional({
    type: UpdateAgentSettingsDto,
    description: "This number's own agent settings (the global ones are the defaults)",
  })
  @IsOptional()
  @ValidateNested({ message: 'must be an object of agent settings' })
  @Type(() => UpdateAgentSettingsDto)
  agent?: UpdateAgentSettingsDto;

  @ApiPropertyOptional({ writeOnly: true })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Length(1, 4096, { message: 'must be 1 to 4096 characters' })
  access_token?: string;

  @ApiPropertyOptional({ enum: TOKEN_TYPES })
  @IsOptional()
  @IsIn(TOKEN_TYPES, { message: `must be one of ${TOKEN_TYPES.join(', ')}` })
  token_type?: TokenType;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Matches(PLATFORM_ID_PATTERN, { message: PLATFORM_ID_MESSAGE })
  channel_account_id?: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    pattern: PLATFORM_ID_PATTERN.source,
    example: '506914307656634',
    description: 'Business id at the platform; null clears it',
  })
  @ValidateIf((_, value) => value !== null && value !== undefined)
  @IsString({ message: 'must be a string' })
  @Matches(PLATFORM_ID_PATTERN, { message: PLATFORM_ID_MESSAGE })
  business_id?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    pattern: PLATFORM_ID_PATTERN.source,
    example: '1234567890',
    description: 'App id at the platform; null clears it',
  })
  @ValidateIf((_, value) => value !== null && value !== undefined)
  @IsString({ message: 'must be a string' })
  @Matches(PLATFORM_ID_PATTERN, { message: PLATFORM_ID_MESSAGE })
  platform_app_id?: string | null;

  @ApiPropertyOptional({
    description:
      "Send campaigns of marketing templates through the platform's marketing messages endpoint",
  })
  @IsOptional()
  @IsBoolean({ message: 'must be true or false' })
  marketing_messages?: boolean;

  @ApiPropertyOptional({
    description:
      "false: the number left the platform's phone app (it is paced at its own rate again; an echo, history or contacts sync marks it shared again)",
  })
  @IsOptional()
  @IsBoolean({ message: 'must be true or false' })
  coexistence?: boolean;

  @ApiPropertyOptional({
    type: String,
    deprecated: true,
    description: 'Not patchable: refused with 400',
  })
  @IsEmpty({ message: 'cannot be changed; create a new instance for another number' })
  phone_number_id?: never;
}
