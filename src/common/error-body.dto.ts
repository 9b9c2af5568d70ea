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

/** A template the catalogue has in other languages (`template_not_found`). */
export class TemplateLanguagesDetailDto {
  @ApiProperty({ example: 'order_update' }) name: string;
  @ApiProperty({ example: 'en_US', description: 'The language asked for' }) language: string;
  @ApiProperty({ type: [String], example: ['pt_BR'], description: 'The languages it has' })
  languages: string[];
}

/** A template that is not approved (`template_not_approved`). */
export class TemplateStatusDetailDto {
  @ApiProperty({ example: 'PAUSED' }) status: string;
  @ApiProperty({ type: String, nullable: true, example: 'LOW_QUALITY' }) reason: string | null;
}

/** The state that refused an action (`campaign_state_conflict`). */
export class StateDetailDto {
  @ApiProperty({ example: 'completed' }) state: string;
}

/** The models ErrorBodyDto refers to, for the document's components. */
export const ERROR_DETAIL_MODELS = [
  FieldErrorDetailDto,
  PlatformErrorDetailDto,
  TemplateLanguagesDetailDto,
  TemplateStatusDetailDto,
  StateDetailDto,
];

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
        { $ref: getSchemaPath(TemplateLanguagesDetailDto) },
        { $ref: getSchemaPath(TemplateStatusDetailDto) },
        { $ref: getSchemaPath(StateDetailDto) },
      ],
    },
    description:
      'validation_failed: { field, message } for every failing field; platform_rejected (and other platform answers): { code, message, fbtrace_id }; template_not_found: { name, language, languages }; template_not_approved: { status, reason }; campaign_state_conflict: { state }',
  })
  details?: Array<
    | FieldErrorDetailDto
    | PlatformErrorDetailDto
    | TemplateLanguagesDetailDto
    | TemplateStatusDetailDto
    | StateDetailDto
  >;
}
