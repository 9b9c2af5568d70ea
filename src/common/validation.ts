import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { AppException, type FieldError } from './app.exception.js';

function flatten(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.entries(error.constraints ?? {}).map(([rule, message]) => ({
      field,
      message: rule === 'whitelistValidation' ? 'is not an accepted field' : message,
    }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/** Turns class-validator errors into one 400 naming every failing field. */
export function validationFailed(errors: ValidationError[]): AppException {
  return AppException.validation(flatten(errors));
}

export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    // One message per field: the first rule it breaks.
    stopAtFirstError: true,
    validationError: { target: false, value: false },
    exceptionFactory: validationFailed,
  });
}
