import { ApiProperty } from '@nestjs/swagger';

/** The person who sent a message or changed a pause, as they were named then. */
export class PersonDto {
  /** Their account (null for ADMIN_USERNAME, which has no account). */
  id: string | null;
  /** Their display name when they did it. */
  display_name: string;

  /** The person of a row's two columns; null where no person acted. */
  static of(accountId: string | null, name: string | null): PersonDto | null {
    return name === null ? null : { id: accountId, display_name: name };
  }
}

/**
 * A property holding a PersonDto or null. The schema is written out rather
 * than referenced: OpenAPI 3.0 cannot make a reference nullable in a way
 * that validators and generated clients read alike.
 */
export function PersonProperty(description: string): PropertyDecorator {
  return ApiProperty({
    type: 'object',
    nullable: true,
    description,
    required: ['id', 'display_name'],
    properties: {
      id: {
        type: 'string',
        format: 'uuid',
        nullable: true,
        description: 'Their account (null for ADMIN_USERNAME, which has no account)',
      },
      display_name: {
        type: 'string',
        example: 'Ana Souza',
        description: 'Their display name when they did it',
      },
    },
  });
}
