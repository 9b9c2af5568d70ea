import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmpty, IsIn, IsOptional, IsString, Length, Matches, ValidateIf } from 'class-validator';
import { PLATFORM_ID_MESSAGE, PLATFORM_ID_PATTERN } from '../../common/platform-id.js';
import { TOKEN_TYPES, type TokenType } from '../instance.types.js';

/** The fields PATCH may change; a new access_token is checked with the platform. */
export class UpdateInstanceDto {
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  name?: string;

  @ApiPropertyOptional({ writeOnly: true })
  @IsOptional()
  @IsString()
  @Length(1, 4096)
  access_token?: string;

  @ApiPropertyOptional({ enum: TOKEN_TYPES })
  @IsOptional()
  @IsIn(TOKEN_TYPES)
  token_type?: TokenType;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @Matches(PLATFORM_ID_PATTERN, { message: PLATFORM_ID_MESSAGE })
  channel_account_id?: string;

  @ApiPropertyOptional({ nullable: true, description: 'null clears it' })
  @ValidateIf((_, value) => value !== null && value !== undefined)
  @IsString()
  @Matches(PLATFORM_ID_PATTERN, { message: PLATFORM_ID_MESSAGE })
  business_id?: string | null;

  @ApiPropertyOptional({ nullable: true, description: 'null clears it' })
  @ValidateIf((_, value) => value !== null && value !== undefined)
  @IsString()
  @Matches(PLATFORM_ID_PATTERN, { message: PLATFORM_ID_MESSAGE })
  platform_app_id?: string | null;

  @ApiPropertyOptional({
    type: String,
    deprecated: true,
    description: 'Not patchable: refused with 400',
  })
  @IsEmpty({ message: 'cannot be changed; create a new instance for another number' })
  phone_number_id?: never;
}
