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

/** An instance as the console's switcher shows it. */
export class SessionInstanceDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'Store' }) name: string;
  @ApiProperty({ type: String, nullable: true, example: '+55 11 99999-0000' })
  display_phone_number: string | null;
  @ApiProperty() is_active: boolean;
}

/** Who the console's session is, and the instances whose inbox they may open. */
export class SessionDto {
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
  @ApiProperty({
    type: [SessionInstanceDto],
    description: "An admin's: every instance; an operator's: those it answers for",
  })
  instances: SessionInstanceDto[];
}
