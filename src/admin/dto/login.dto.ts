import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';

export class LoginDto {
  @ApiProperty({ example: 'admin' })
  @IsString()
  @Length(1, 200)
  username: string;

  @ApiProperty({ writeOnly: true })
  @IsString()
  @Length(1, 1000)
  password: string;
}

export class LoginResponseDto {
  @ApiProperty({ description: 'JWT (HS256); send as Authorization: Bearer <token>' })
  token: string;

  @ApiProperty() username: string;

  @ApiProperty({ description: 'Seconds until the token expires', example: 3600 })
  expires_in: number;
}
