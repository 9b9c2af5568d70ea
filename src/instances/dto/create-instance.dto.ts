import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import { PLATFORM_ID_MESSAGE, PLATFORM_ID_PATTERN } from '../../common/platform-id.js';
import { TOKEN_TYPES, type TokenType } from '../instance.types.js';

export class CreateInstanceDto {
  @ApiProperty({ example: 'Store front', maxLength: 200 })
  @IsString({ message: 'must be a string' })
  @Length(1, 200, { message: 'must be 1 to 200 characters' })
  name: string;

  @ApiProperty({ example: '106540352242922', description: 'Phone number id at the platform' })
  @IsString({ message: 'must be a string' })
  @Matches(PLATFORM_ID_PATTERN, { message: PLATFORM_ID_MESSAGE })
  phone_number_id: string;

  @ApiProperty({ example: '102290129340398', description: 'Business account id at the platform' })
  @IsString({ message: 'must be a string' })
  @Matches(PLATFORM_ID_PATTERN, { message: PLATFORM_ID_MESSAGE })
  channel_account_id: string;

  @ApiProperty({
    writeOnly: true,
    description: 'Platform access token; stored encrypted, never returned',
  })
  @IsString({ message: 'must be a string' })
  @Length(1, 4096, { message: 'must be 1 to 4096 characters' })
  access_token: string;

  @ApiProperty({ enum: TOKEN_TYPES })
  @IsIn(TOKEN_TYPES, { message: `must be one of ${TOKEN_TYPES.join(', ')}` })
  token_type: TokenType;

  @ApiPropertyOptional({ example: '506914307656634' })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Matches(PLATFORM_ID_PATTERN, { message: PLATFORM_ID_MESSAGE })
  business_id?: string;

  @ApiPropertyOptional({ example: '1234567890' })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Matches(PLATFORM_ID_PATTERN, { message: PLATFORM_ID_MESSAGE })
  platform_app_id?: string;
}
