import { Injectable, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { AppException } from './app.exception.js';

/** A path parameter that must be a UUID: a malformed one is a 400 naming the parameter. */
@Injectable()
export class ParseUuidPipe implements PipeTransform<string, string> {
  transform(value: string, metadata: ArgumentMetadata): string {
    if (!isUUID(value)) {
      throw AppException.validation([{ field: metadata.data ?? 'id', message: 'must be a UUID' }]);
    }
    return value;
  }
}
