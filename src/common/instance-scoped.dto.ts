import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsUUID } from 'class-validator';

/** Every API-key request names its instance, unless its key is bound to one. */
export class InstanceScopedDto {
  @ApiPropertyOptional({
    format: 'uuid',
    description:
      "The instance to act on; may be left out when the API key is bound to one, or (the inbox's reads) when an operator's token answers for one only",
  })
  @IsOptional()
  @IsUUID('all', { message: 'must be a UUID' })
  instance_id?: string;
}
