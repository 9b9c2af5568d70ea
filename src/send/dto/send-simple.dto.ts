import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsDefined,
  IsEmail,
  IsNumber,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { SendBaseDto, SendMediaBaseDto } from './send-base.dto.js';

const WAMID_LENGTH = 256;

export class SendTextDto extends SendBaseDto {
  @ApiProperty({ example: 'Hello! How can we help?', maxLength: 4096 })
  @IsString()
  @Length(1, 4096)
  body: string;

  @ApiPropertyOptional({ description: 'wamid of the message quoted', example: 'wamid.HBgL…' })
  @IsOptional()
  @IsString()
  @Length(1, WAMID_LENGTH)
  reply_to?: string;
}

export class SendImageDto extends SendMediaBaseDto {
  @ApiPropertyOptional({ maxLength: 1024 })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  caption?: string;

  @ApiPropertyOptional({
    description: 'Kept with the stored message; the platform shows no file name for images',
  })
  @IsOptional()
  @IsString()
  @Length(1, 240)
  filename?: string;
}

export class SendDocumentDto extends SendMediaBaseDto {
  @ApiProperty({ example: 'invoice-2031.pdf', description: 'File name with its extension' })
  @IsString()
  @Length(1, 240)
  @Matches(/\.[A-Za-z0-9]{1,10}$/, { message: 'must be a file name with an extension' })
  filename: string;

  @ApiPropertyOptional({ maxLength: 1024 })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  caption?: string;
}

export class SendAudioDto extends SendMediaBaseDto {}

export class SendVideoDto extends SendMediaBaseDto {
  @ApiPropertyOptional({ maxLength: 1024 })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  caption?: string;
}

export class SendStickerDto extends SendMediaBaseDto {}

export class SendLocationDto extends SendBaseDto {
  @ApiProperty({ example: -23.5614, minimum: -90, maximum: 90 })
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(-90)
  @Max(90)
  latitude: number;

  @ApiProperty({ example: -46.6559, minimum: -180, maximum: 180 })
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(-180)
  @Max(180)
  longitude: number;

  @ApiPropertyOptional({ example: 'Paulista Store' })
  @IsOptional()
  @IsString()
  @Length(1, 1000)
  name?: string;

  @ApiPropertyOptional({ example: 'Av. Paulista, 1000 - São Paulo' })
  @IsOptional()
  @IsString()
  @Length(1, 1000)
  address?: string;
}

export class ContactNameDto {
  @ApiProperty({ example: 'Maria Silva' })
  @IsString()
  @Length(1, 256)
  formatted_name: string;

  @ApiPropertyOptional({ example: 'Maria' })
  @IsOptional()
  @IsString()
  @Length(1, 256)
  first_name?: string;

  @ApiPropertyOptional({ example: 'Silva' })
  @IsOptional()
  @IsString()
  @Length(1, 256)
  last_name?: string;
}

export class ContactPhoneDto {
  @ApiProperty({ example: '+55 11 99999-0000' })
  @IsString()
  @Length(1, 64)
  phone: string;

  @ApiPropertyOptional({ example: 'CELL' })
  @IsOptional()
  @IsString()
  @Length(1, 32)
  type?: string;
}

export class ContactEmailDto {
  @ApiProperty({ example: 'maria@example.com' })
  @IsEmail()
  email: string;

  @ApiPropertyOptional({ example: 'WORK' })
  @IsOptional()
  @IsString()
  @Length(1, 32)
  type?: string;
}

export class ContactCardDto {
  @ApiProperty({ type: ContactNameDto })
  @IsDefined()
  @ValidateNested()
  @Type(() => ContactNameDto)
  name: ContactNameDto;

  @ApiPropertyOptional({ type: [ContactPhoneDto] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => ContactPhoneDto)
  phones?: ContactPhoneDto[];

  @ApiPropertyOptional({ type: [ContactEmailDto] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => ContactEmailDto)
  emails?: ContactEmailDto[];
}

export class SendContactsDto extends SendBaseDto {
  @ApiProperty({ type: [ContactCardDto] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => ContactCardDto)
  contacts: ContactCardDto[];
}

export class SendReactionDto extends SendBaseDto {
  @ApiProperty({ description: 'wamid of the message reacted to' })
  @IsString()
  @Length(1, WAMID_LENGTH)
  message_id: string;

  @ApiProperty({ example: '👍', description: 'An empty string removes the reaction' })
  @IsString()
  @MaxLength(32)
  emoji: string;
}
