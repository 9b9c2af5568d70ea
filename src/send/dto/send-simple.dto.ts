import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsDefined,
  IsObject,
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
const LATITUDE = 'must be a number from -90 to 90';
const LONGITUDE = 'must be a number from -180 to 180';

export class SendTextDto extends SendBaseDto {
  @ApiProperty({ example: 'Hello! How can we help?', maxLength: 4096 })
  @IsString({ message: 'must be a string' })
  @Length(1, 4096, { message: 'must be 1 to 4096 characters' })
  body: string;

  @ApiPropertyOptional({ description: 'wamid of the message quoted', example: 'wamid.HBgL…' })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Length(1, WAMID_LENGTH, { message: `must be 1 to ${WAMID_LENGTH} characters` })
  reply_to?: string;
}

export class SendImageDto extends SendMediaBaseDto {
  @ApiPropertyOptional({ maxLength: 1024 })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @MaxLength(1024, { message: 'must be at most 1024 characters' })
  caption?: string;

  @ApiPropertyOptional({
    description: 'Kept with the stored message; the platform shows no file name for images',
  })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Length(1, 240, { message: 'must be 1 to 240 characters' })
  filename?: string;
}

export class SendDocumentDto extends SendMediaBaseDto {
  @ApiProperty({ example: 'invoice-2031.pdf', description: 'File name with its extension' })
  @IsString({ message: 'must be a string' })
  @Length(1, 240, { message: 'must be 1 to 240 characters' })
  @Matches(/\.[A-Za-z0-9]{1,10}$/, { message: 'must be a file name with an extension' })
  filename: string;

  @ApiPropertyOptional({ maxLength: 1024 })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @MaxLength(1024, { message: 'must be at most 1024 characters' })
  caption?: string;
}

export class SendAudioDto extends SendMediaBaseDto {}

export class SendVideoDto extends SendMediaBaseDto {
  @ApiPropertyOptional({ maxLength: 1024 })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @MaxLength(1024, { message: 'must be at most 1024 characters' })
  caption?: string;
}

export class SendStickerDto extends SendMediaBaseDto {}

export class SendLocationDto extends SendBaseDto {
  @ApiProperty({ example: -23.5614, minimum: -90, maximum: 90 })
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: LATITUDE })
  @Min(-90, { message: LATITUDE })
  @Max(90, { message: LATITUDE })
  latitude: number;

  @ApiProperty({ example: -46.6559, minimum: -180, maximum: 180 })
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: LONGITUDE })
  @Min(-180, { message: LONGITUDE })
  @Max(180, { message: LONGITUDE })
  longitude: number;

  @ApiPropertyOptional({ example: 'Paulista Store' })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Length(1, 1000, { message: 'must be 1 to 1000 characters' })
  name?: string;

  @ApiPropertyOptional({ example: 'Av. Paulista, 1000 - São Paulo' })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Length(1, 1000, { message: 'must be 1 to 1000 characters' })
  address?: string;
}

export class ContactNameDto {
  @ApiProperty({ example: 'Maria Silva' })
  @IsString({ message: 'must be a string' })
  @Length(1, 256, { message: 'must be 1 to 256 characters' })
  formatted_name: string;

  @ApiPropertyOptional({ example: 'Maria' })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Length(1, 256, { message: 'must be 1 to 256 characters' })
  first_name?: string;

  @ApiPropertyOptional({ example: 'Silva' })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Length(1, 256, { message: 'must be 1 to 256 characters' })
  last_name?: string;
}

export class ContactPhoneDto {
  @ApiProperty({ example: '+55 11 99999-0000' })
  @IsString({ message: 'must be a string' })
  @Length(1, 64, { message: 'must be 1 to 64 characters' })
  phone: string;

  @ApiPropertyOptional({ example: 'CELL' })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Length(1, 32, { message: 'must be 1 to 32 characters' })
  type?: string;
}

export class ContactEmailDto {
  @ApiProperty({ example: 'maria@example.com' })
  @IsEmail({}, { message: 'must be an email address' })
  email: string;

  @ApiPropertyOptional({ example: 'WORK' })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Length(1, 32, { message: 'must be 1 to 32 characters' })
  type?: string;
}

export class ContactCardDto {
  @ApiProperty({ type: ContactNameDto })
  @IsDefined({ message: 'is required' })
  @IsObject({ message: 'must be an object' })
  @ValidateNested({ message: 'must be an object' })
  @Type(() => ContactNameDto)
  name: ContactNameDto;

  @ApiPropertyOptional({ type: [ContactPhoneDto] })
  @IsOptional()
  @IsArray({ message: 'must be an array' })
  @ArrayMaxSize(20, { message: 'must hold at most 20 phones' })
  @ValidateNested({ each: true, message: 'must be an object' })
  @Type(() => ContactPhoneDto)
  phones?: ContactPhoneDto[];

  @ApiPropertyOptional({ type: [ContactEmailDto] })
  @IsOptional()
  @IsArray({ message: 'must be an array' })
  @ArrayMaxSize(20, { message: 'must hold at most 20 emails' })
  @ValidateNested({ each: true, message: 'must be an object' })
  @Type(() => ContactEmailDto)
  emails?: ContactEmailDto[];
}

export class SendContactsDto extends SendBaseDto {
  @ApiProperty({ type: [ContactCardDto] })
  @IsArray({ message: 'must be an array' })
  @ArrayMinSize(1, { message: 'must hold 1 to 20 contacts' })
  @ArrayMaxSize(20, { message: 'must hold 1 to 20 contacts' })
  @ValidateNested({ each: true, message: 'must be an object' })
  @Type(() => ContactCardDto)
  contacts: ContactCardDto[];
}

export class SendReactionDto extends SendBaseDto {
  @ApiProperty({ description: 'wamid of the message reacted to' })
  @IsString({ message: 'must be a string' })
  @Length(1, WAMID_LENGTH, { message: `must be 1 to ${WAMID_LENGTH} characters` })
  message_id: string;

  @ApiProperty({ example: '👍', description: 'An empty string removes the reaction' })
  @IsString({ message: 'must be a string' })
  @MaxLength(32, { message: 'must be at most 32 characters' })
  emoji: string;
}
