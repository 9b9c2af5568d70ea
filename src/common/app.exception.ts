import { ERROR_STATUS, type ErrorCode } from './error-codes.js';

export interface FieldError {
  field: string;
  message: string;
}

/** Extra detail of an error body: failing fields, or what the platform said. */
export type ErrorDetail = FieldError | Record<string, string | string[] | number | null>;

/**
 * A domain error carrying a contract error code. Services throw it; the global
 * filter turns it into the contract's error body.
 */
export class AppException extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    /** Headers to set on the answer, e.g. Retry-After. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppException';
    this.status = ERROR_STATUS[code];
  }

  static validation(details: FieldError[]): AppException {
    const message = details.map((d) => `${d.field}: ${d.message}`).join('; ');
    return new AppException('validation_failed', message, details);
  }
}
