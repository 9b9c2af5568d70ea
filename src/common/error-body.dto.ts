import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ERROR_STATUS } from './error-codes.js';

/** The body of every error answer (contract §3). */
export class ErrorBodyDto {
  @ApiProperty({ example: 400 }) statusCode: number;
  @ApiProperty({ example: 'Bad Request' }) error: string;
  @ApiProperty({ enum: Object.keys(ERROR_STATUS), example: 'validation_failed' }) code: string;
  @ApiProperty({ example: 'buttons: at most 3 reply buttons' }) message: string;
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'object' },
    description:
      'validation_failed: [{ field, message }] for every failing field; platform_rejected: [{ code, message, fbtrace_id }]',
    example: [{ field: 'buttons', message: 'at most 3 reply buttons' }],
  })
  details?: Array<Record<string, unknown>>;
}
