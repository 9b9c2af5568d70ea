import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, Length, Matches } from 'class-validator';
import { InstanceScopedDto } from '../../common/instance-scoped.dto.js';

export class RegisterNumberDto extends InstanceScopedDto {
  @ApiProperty({ example: '123456', description: 'Two-step verification PIN: exactly 6 digits' })
  @IsString({ message: 'must be a string' })
  @Matches(/^\d{6}$/, { message: 'must be exactly 6 digits' })
  pin: string;
}

export const CODE_METHODS = ['SMS', 'VOICE'] as const;

export class RequestCodeDto extends InstanceScopedDto {
  @ApiProperty({ enum: CODE_METHODS })
  @IsIn(CODE_METHODS, { message: `must be one of ${CODE_METHODS.join(', ')}` })
  code_method: (typeof CODE_METHODS)[number];

  @ApiProperty({ example: 'pt_BR', description: 'Locale such as en or pt_BR' })
  @IsString({ message: 'must be a string' })
  @Matches(/^[a-z]{2,3}(_[A-Z]{2})?$/, { message: 'must be a locale such as en or pt_BR' })
  language: string;
}

export class VerifyCodeDto extends InstanceScopedDto {
  @ApiProperty({ example: '123456' })
  @IsString({ message: 'must be a string' })
  @Length(1, 32, { message: 'must be 1 to 32 characters' })
  code: string;
}

export class PhoneNumberRecordDto {
  @ApiProperty() id: string;
  @ApiPropertyOptional() display_phone_number?: string;
  @ApiPropertyOptional() verified_name?: string;
  @ApiPropertyOptional({ example: 'GREEN' }) quality_rating?: string;
  @ApiPropertyOptional({ example: 'VERIFIED' }) code_verification_status?: string;
  @ApiPropertyOptional({ example: 'TIER_1K' }) messaging_limit_tier?: string;
}

export class PhoneNumberListDto {
  @ApiProperty({ type: [PhoneNumberRecordDto] }) data: PhoneNumberRecordDto[];
}

export class SuccessDto {
  @ApiProperty() success: boolean;
}
