import {
  ApiProperty,
  ApiPropertyOptional,
  getSchemaPath,
  PickType,
  type SchemaObject,
} from '@nestjs/swagger';

import {
  ListSectionDto,
  ReplyButtonDto,
  SendInteractiveDto,
  type InteractiveType,
} from './send-interactive.dto.js';

/*
 * The API description of POST /send/interactive: one schema per form, chosen
 * by `type`. SendInteractiveDto (one class for all three) is what validates
 * the body; these classes only describe it, so that a generated client knows
 * which fields go with which type.
 */

/** The fields every form has. */
const COMMON_FIELDS = ['instance_id', 'to', 'recipient', 'body', 'header', 'footer'] as const;

export class SendInteractiveButtonsDto extends PickType(SendInteractiveDto, COMMON_FIELDS) {
  @ApiProperty({ enum: ['buttons'], description: 'Reply buttons' })
  type: 'buttons';

  @ApiProperty({
    type: [ReplyButtonDto],
    minItems: 1,
    maxItems: 3,
    description: '1 to 3 reply buttons, with unique ids',
  })
  buttons: ReplyButtonDto[];
}

export class SendInteractiveListDto extends PickType(SendInteractiveDto, COMMON_FIELDS) {
  @ApiProperty({ enum: ['list'], description: 'A list of options in sections' })
  type: 'list';

  @ApiPropertyOptional({
    maxLength: 20,
    example: 'Ver opções',
    description: 'The button that opens the list; Menu when left out',
  })
  button_text?: string;

  @ApiProperty({
    type: [ListSectionDto],
    minItems: 1,
    maxItems: 10,
    description: '1 to 10 sections, with 1 to 10 rows in all',
  })
  sections: ListSectionDto[];
}

export class SendInteractiveCtaUrlDto extends PickType(SendInteractiveDto, COMMON_FIELDS) {
  @ApiProperty({ enum: ['cta_url'], description: 'A button that opens a URL' })
  type: 'cta_url';

  @ApiPropertyOptional({
    maxLength: 20,
    example: 'Rastrear',
    description: 'The button text; Acessar when left out',
  })
  display_text?: string;

  @ApiProperty({ example: 'https://example.com/order/42', description: 'An http or https URL' })
  url: string;
}

/** Each form's schema, by its `type`. */
export const INTERACTIVE_FORMS: Record<InteractiveType, new () => object> = {
  buttons: SendInteractiveButtonsDto,
  list: SendInteractiveListDto,
  cta_url: SendInteractiveCtaUrlDto,
};

/** The body of POST /send/interactive: one of the forms, told apart by `type`. */
export const INTERACTIVE_BODY_SCHEMA: SchemaObject = {
  oneOf: Object.values(INTERACTIVE_FORMS).map((form) => ({ $ref: getSchemaPath(form) })),
  discriminator: {
    propertyName: 'type',
    mapping: Object.fromEntries(
      Object.entries(INTERACTIVE_FORMS).map(([type, form]) => [type, getSchemaPath(form)]),
    ),
  },
};
