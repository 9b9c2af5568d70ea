import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Matches,
} from 'class-validator';
import { ACCOUNT_ROLES, type Account, type AccountRole } from '../account.types.js';

/** Long enough that only a guesser with the hash table could try, and not then (argon2id). */
export const PASSWORD_MIN = 12;

const passwordRule = (): PropertyDecorator => (target, key) => {
  IsString({ message: 'must be a string' })(target, key);
  Length(PASSWORD_MIN, 1000, { message: `must be ${PASSWORD_MIN} to 1000 characters` })(
    target,
    key,
  );
};

const instancesRule = (): PropertyDecorator => (target, key) => {
  IsArray({ message: 'must be an array of instance ids' })(target, key);
  ArrayMaxSize(1000, { message: 'must list at most 1000 instances' })(target, key);
  IsUUID('all', { each: true, message: 'must hold instance ids (UUIDs) only' })(target, key);
};

export class CreateAccountDto {
  @ApiProperty({
    example: 'ana',
    description: 'Letters, digits and . _ - (case is ignored when logging in)',
  })
  @IsString({ message: 'must be a string' })
  @Matches(/^[A-Za-z0-9._-]{1,100}$/, {
    message: 'must be 1 to 100 letters, digits, dots, underscores or hyphens',
  })
  username: string;

  @ApiProperty({
    example: 'Ana Souza',
    description: 'The name customers’ conversations show for this person',
  })
  @IsString({ message: 'must be a string' })
  @Length(1, 200, { message: 'must be 1 to 200 characters' })
  display_name: string;

  @ApiProperty({
    enum: ACCOUNT_ROLES,
    description: 'admin: everything; operator: the inbox of its instances',
  })
  @IsIn(ACCOUNT_ROLES, { message: `must be one of ${ACCOUNT_ROLES.join(', ')}` })
  role: AccountRole;

  @ApiProperty({ writeOnly: true, minLength: PASSWORD_MIN, maxLength: 1000 })
  @passwordRule()
  password: string;

  @ApiPropertyOptional({
    type: [String],
    format: 'uuid',
    description: "An operator's instances (an admin reaches every instance)",
  })
  @IsOptional()
  @instancesRule()
  instance_ids?: string[];
}

export class UpdateAccountDto {
  @ApiPropertyOptional({ example: 'Ana Souza' })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Length(1, 200, { message: 'must be 1 to 200 characters' })
  display_name?: string;

  @ApiPropertyOptional({ enum: ACCOUNT_ROLES })
  @IsOptional()
  @IsIn(ACCOUNT_ROLES, { message: `must be one of ${ACCOUNT_ROLES.join(', ')}` })
  role?: AccountRole;

  @ApiPropertyOptional({ type: [String], format: 'uuid', description: 'Replaces the list' })
  @IsOptional()
  @instancesRule()
  instance_ids?: string[];

  @ApiPropertyOptional({
    description: 'A disabled account cannot log in and its sessions end at once',
  })
  @IsOptional()
  @IsBoolean({ message: 'must be a boolean' })
  disabled?: boolean;
}

export class SetPasswordDto {
  @ApiProperty({ writeOnly: true, minLength: PASSWORD_MIN, maxLength: 1000 })
  @passwordRule()
  password: string;
}

export class AccountDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() username: string;
  @ApiProperty() display_name: string;
  @ApiProperty({ enum: ACCOUNT_ROLES }) role: AccountRole;
  @ApiProperty({ type: [String], format: 'uuid' }) instance_ids: string[];
  @ApiProperty() disabled: boolean;
  @ApiProperty({ format: 'date-time' }) password_changed_at: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;

  static from(account: Account): AccountDto {
    return {
      id: account.id,
      username: account.username,
      display_name: account.display_name,
      role: account.role,
      instance_ids: account.instance_ids,
      disabled: account.disabled_at !== null,
      password_changed_at: account.password_changed_at.toISOString(),
      created_at: account.created_at.toISOString(),
      updated_at: account.updated_at.toISOString(),
    };
  }
}
