import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { ERROR_STATUS } from './error-codes.js';

/** One failing field of a `validation_failed` answer. */
export class FieldErrorDetailDto {
  @ApiProperty({ example: 'pin', description: 'The field, dotted for nested ones (media.link)' })
  field: string;

  @ApiProperty({ example: 'must be exactly 6 digits' })
  message: string;
}

/** What the platform said, in a `platform_rejected` (or other platform) answer. */
export class PlatformErrorDetailDto {
  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 131026,
    description: "The platform's error code",
  })
  code: number | null;

  @ApiProperty({ type: String, nullable: true, example: '(#131026) Message undeliverable' })
  message: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'AbCdEfGhIjKlMnOp' })
  fbtrace_id: string | null;
}

/** The models ErrorBodyDto refers to, for the document's components. */
export const ERROR_DETAIL_MODELS = [FieldErrorDetailDto, PlatformErrorDetailDto];

/** The body of every error answer (contract §3). */
export class ErrorBodyDto {
  @ApiProperty({ example: 400 }) statusCode: number;
  @ApiProperty({ example: 'Bad Request', description: 'The HTTP reason phrase' }) error: string;
  @ApiProperty({ enum: Object.keys(ERROR_STATUS), example: 'validation_failed' }) code: string;
  @ApiProperty({ example: 'pin: must be exactly 6 digits' }) message: string;
  @ApiPropertyOptional({
    type: 'array',
    items: {
      oneOf: [
        { $ref: getSchemaPath(FieldErrorDetailDto) },
        { $ref: getSchemaPath(PlatformErrorDetailDto) },
      ],
    },
    description:
      'validation_failed: { field, message } for every failing field; platform_rejected (and other platform answers): { code, message, fbtrace_id }',
  })
  details?: Array<FieldErrorDetailDto | PlatformErrorDetailDto>;
}
