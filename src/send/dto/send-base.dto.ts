import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsObject, IsString, Matches, ValidateNested } from 'class-validator';
import { InstanceScopedDto } from '../../common/instance-scoped.dto.js';
import { HasExactlyOneSource, MediaDto } from './media.dto.js';

export class SendBaseDto extends InstanceScopedDto {
  @ApiProperty({
    example: '5511999990000',
    description: 'Recipient: 8 to 15 digits with country code, no symbols',
  })
  @IsString()
  @Matches(/^\d{8,15}$/, { message: 'must be 8 to 15 digits with the country code, no symbols' })
  to: string;
}

/** Base of the media types: `media` with exactly one of id and link. */
export class SendMediaBaseDto extends SendBaseDto {
  @ApiProperty({ type: MediaDto })
  @IsDefined()
  @IsObject()
  @HasExactlyOneSource()
  @ValidateNested()
  @Type(() => MediaDto)
  media: MediaDto;
}
