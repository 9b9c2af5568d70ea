import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';

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

  @ApiProperty({ description: 'Seconds until the token expires', example: 3600 })
  expires_in: number;
}
