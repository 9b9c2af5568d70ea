import { ApiProperty } from '@nestjs/swagger';

export class SendResultDto {
  @ApiProperty() success: boolean;
  @ApiProperty({ example: 'wamid.HBgLNTUxMTk5OTk5MDAwMBUCABEYEjA5QjY3' }) wamid: string;
}
