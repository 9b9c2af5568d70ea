import { ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsOptional,
  IsString,
  IsUrl,
  Length,
  ValidateBy,
  type ValidationOptions,
} from 'class-validator';

/** Exactly one of `id` and `link`: checked on the object holding the media. */
export function HasExactlyOneSource(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'hasExactlyOneSource',
      validator: {
        validate: (value: unknown) => {
          if (!value || typeof value !== 'object') return true; // reported by IsObject/IsDefined
          const { id, link } = value as { id?: unknown; link?: unknown };
          return (id !== undefined) !== (link !== undefined);
        },
        defaultMessage: () => 'must have exactly one of id and link',
      },
    },
    options,
  );
}

export class MediaDto {
  @ApiPropertyOptional({ description: 'Id of media uploaded with POST /media/upload' })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Length(1, 256, { message: 'must be 1 to 256 characters' })
  id?: string;

  @ApiPropertyOptional({ example: 'https://example.com/picture.jpg' })
  @IsOptional()
  @IsUrl(
    { protocols: ['http', 'https'], require_protocol: true, require_tld: false },
    { message: 'must be an http or https URL' },
  )
  link?: string;
}
