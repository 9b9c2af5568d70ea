import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';
import { ACCOUNT_ROLES, type AccountRole } from '../../accounts/account.types.js';

export class LoginDto {
  @ApiProperty({ example: 'admin' })
  @IsString({ message: 'must be a string' })
  @Length(1, 200, { message: 'must be 1 to 200 characters' })
  username: string;

  @ApiProperty({ writeOnly: true })
  @IsString({ message: 'must be a string' })
  @Length(1, 1000, { message: 'must be 1 to 1000 characters' })
  password: string;
}

export class LoginResponseDto {
  @ApiProperty({ description: 'JWT (HS256); send as Authorization: Bearer <token>' })
  token: string;

  @ApiProperty() username: string;

  @ApiProperty({ description: 'The name shown for this person' }) display_name: string;

  @ApiProperty({ enum: ACCOUNT_ROLES }) role: AccountRole;

  @ApiProperty({
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'The account; null for ADMIN_USERNAME, which has none',
  })
  account_id: string | null;

  @ApiProperty({ description: 'Seconds until the token expires', example: 3600 })
  expires_in: number;
}
