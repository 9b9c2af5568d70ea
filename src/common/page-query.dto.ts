import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';

const LIMIT_MESSAGE = 'must be an integer from 1 to 100';

/** A page size: 1 to 100, `fallback` when absent. */
export function PageLimit(fallback: number): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ minimum: 1, maximum: 100, default: fallback }),
    IsOptional(),
    Type(() => Number),
    IsInt({ message: LIMIT_MESSAGE }),
    Min(1, { message: LIMIT_MESSAGE }),
    Max(100, { message: LIMIT_MESSAGE }),
  );
}

/** A listing's page: `limit` rows (1 to 100, 20 by default) after `cursor`. */
export class PageQueryDto {
  @ApiPropertyOptional({ description: 'next_cursor of the previous page' })
  @IsOptional()
  @IsString({ message: 'must be a cursor from next_cursor' })
  cursor?: string;

  @PageLimit(20)
  limit?: number;
}
