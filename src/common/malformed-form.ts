import { AppException } from './app.exception.js';

/** A multipart body that breaks off or does not parse is the client's error: 400. */
export function malformedForm(error: unknown): AppException {
  if (error instanceof AppException) return error;
  return AppException.validation([
    { field: 'body', message: 'is not a complete multipart/form-data body' },
  ]);
}
