import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsDefined,
  IsObject,
  IsString,
  Matches,
  ValidateBy,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { InstanceScopedDto } from '../../common/instance-scoped.dto.js';
import { HasExactlyOneSource, MediaDto } from '../../common/media.dto.js';

/** A business-scoped user id: country code, a dot, letters and digits (e.g. `BR.1234ABCD`). */
export const USER_ID_PATTERN = /^[A-Z]{2}\.[A-Za-z0-9._-]{1,125}$/;

/** Every /send body names its recipient by number (`to`) or by user id (`recipient`), exactly one. */
export class SendBaseDto extends InstanceScopedDto {
  @ApiPropertyOptional({
    example: '5511999990000',
    description:
      "The recipient's number: 8 to 15 digits with the country code, no symbols. " +
      'Give exactly one of to and recipient.',
  })
  @ValidateIf((body: SendBaseDto) => body.to !== undefined || body.recipient === undefined)
  @IsDefined({ message: 'is required: give to (a number) or recipient (a user id)' })
  @IsString({ message: 'must be 8 to 15 digits with the country code, no symbols' })
  @Matches(/^\d{8,15}$/, { message: 'must be 8 to 15 digits with the country code, no symbols' })
  // Checked first (decorators run bottom-up): a user id gets its own message.
  @ValidateBy({
    name: 'notUserId',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || !USER_ID_PATTERN.test(value),
      // The platform accepts a user id in `to` and then drops the message without a word.
      defaultMessage: () => 'is a business-scoped user id: send it as recipient, not to',
    },
  })
  to?: string;

  @ApiPropertyOptional({
    example: 'BR.1234567890ABCDEF',
    description:
      "The recipient's business-scoped user id (or parent id), for a user who hides the number. " +
      'Give exactly one of to and recipient.',
  })
  @ValidateIf((body: SendBaseDto) => body.recipient !== undefined)
  @ValidateBy({
    name: 'notBothRecipients',
    validator: {
      validate: (_value: unknown, args) => (args?.object as SendBaseDto).to === undefined,
      defaultMessage: () => 'give either to or recipient, not both',
    },
  })
  @IsString({ message: 'must be a user id like BR.1234567890ABCDEF' })
  @Matches(USER_ID_PATTERN, { message: 'must be a user id like BR.1234567890ABCDEF' })
  recipient?: string;
}

/** Base of the media types: `media` with exactly one of id and link. */
export class SendMediaBaseDto extends SendBaseDto {
  @ApiProperty({ type: MediaDto })
  @IsDefined({ message: 'is required' })
  @IsObject({ message: 'must be an object' })
  @HasExactlyOneSource()
  @ValidateNested({ message: 'must be an object' })
  @Type(() => MediaDto)
  media: MediaDto;
}
