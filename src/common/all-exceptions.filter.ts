import {
  Catch,
  HttpException,
  HttpStatus,
  Logger,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppException } from './app.exception.js';
import type { ErrorCode } from './error-codes.js';
import { isDependencyUnavailable, unavailable } from './unavailable.js';

/** Codes for errors raised by the framework (routing, body parsing) rather than by our services. */
const CODE_BY_STATUS: Partial<Record<number, ErrorCode>> = {
  400: 'validation_failed',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'unavailable',
};

/** Fastify's code for a body over the route's limit. */
const BODY_TOO_LARGE = 'FST_ERR_CTP_BODY_TOO_LARGE';

const INVALID_JSON_CODES = new Set([
  'FST_ERR_CTP_INVALID_JSON_BODY',
  'FST_ERR_CTP_EMPTY_JSON_BODY',
]);

interface FrameworkError {
  statusCode: number;
  code?: string;
  message: string;
}

function isFrameworkError(value: unknown): value is FrameworkError {
  if (!(value instanceof Error)) return false;
  const status = (value as Partial<FrameworkError>).statusCode;
  return typeof status === 'number' && status >= 400 && status < 500;
}

/** A body limit in the words of the limits the README gives (5 MB, 64 KB). */
function describeBytes(bytes: number): string {
  const MB = 1024 * 1024;
  return bytes >= MB && bytes % MB === 0 ? `${bytes / MB} MB` : `${Math.round(bytes / 1024)} KB`;
}

/**
 * The SQLSTATE of a PostgreSQL data exception (class 22: a value out of
 * range, malformed, too long) behind an error, when it is one: a request
 * value the validation let through, which PostgreSQL refused.
 */
function dataExceptionState(error: unknown): string | undefined {
  let cause: unknown = error;
  for (let depth = 0; cause instanceof Error && depth < 4; depth++) {
    const withCode = cause as Error & { code?: unknown; driverError?: unknown; cause?: unknown };
    if (typeof withCode.code === 'string' && /^22[0-9A-Z]{3}$/.test(withCode.code)) {
      return withCode.code;
    }
    cause = withCode.driverError ?? withCode.cause;
  }
  return undefined;
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}

/** An error's stack frames alone: the stack's first lines are its message. */
function stackFrames(error: unknown): string[] {
  const stack = error instanceof Error ? (error.stack ?? '') : '';
  return stack
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .map((line) => line.trim());
}

function fromStatus(
  status: number,
  message: string,
  code?: string,
  bodyLimit?: number,
): AppException {
  if (status === 400 && code && INVALID_JSON_CODES.has(code)) {
    return new AppException('invalid_json', 'The request body is not valid JSON');
  }
  if (status === 413) {
    // Fastify's own words do not say the limit; the contract's message does.
    if (code === BODY_TOO_LARGE && bodyLimit) {
      return new AppException(
        'payload_too_large',
        `The request body is over this route's limit of ${describeBytes(bodyLimit)}`,
      );
    }
    return new AppException('payload_too_large', message);
  }
  const mapped = CODE_BY_STATUS[status];
  if (mapped) return new AppException(mapped, message);
  return new AppException('internal_error', 'Internal server error');
}

/** A request value PostgreSQL refused; what the value was is not repeated. */
function badValue(): AppException {
  return new AppException('validation_failed', 'request: a value is out of range or malformed', [
    { field: 'request', message: 'a value is out of range or malformed' },
  ]);
}

/** The contract's HTTP reason phrase for a status, e.g. 404 → "Not Found". */
function reasonPhrase(status: number): string {
  const name = HttpStatus[status] as string | undefined;
  if (!name) return 'Error';
  return name
    .toLowerCase()
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}

/** The contract's error body for a domain exception. */
export function errorBody(error: AppException): Record<string, unknown> {
  const body: Record<string, unknown> = {
    statusCode: error.status,
    error: reasonPhrase(error.status),
    code: error.code,
    message: error.message,
  };
  if (error.details && error.details.length > 0) body.details = error.details;
  return body;
}

/**
 * The one place that writes error bodies: every error, ours or the
 * framework's, leaves as the contract's JSON body and never with a stack.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpError');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const request = http.getRequest<FastifyRequest>();
    const dataState = dataExceptionState(exception);
    const error = dataState
      ? badValue()
      : this.toAppException(exception, request.routeOptions?.bodyLimit);
    if (dataState) {
      // At error level, with where it was thrown: it may be a bug of ours, not
      // the client's, and alerting must see it. Never the message: PostgreSQL's
      // quotes the value, which may be a secret the client pasted.
      const route = request.routeOptions?.url ?? request.url.split('?')[0];
      this.logger.error(
        {
          reqId: request.id,
          sqlState: dataState,
          route,
          err: { type: errorName(exception), frames: stackFrames(exception) },
        },
        `${request.method} ${route}: PostgreSQL refused a value (${dataState}), answered 400`,
      );
    }

    if (error.status >= 500) {
      const cause = exception instanceof Error ? exception : new Error(String(exception));
      this.logger.error(
        {
          reqId: request.id,
          code: error.code,
          err: { type: cause.name, message: cause.message, stack: cause.stack },
        },
        `${request.method} ${request.url.split('?')[0]} failed: ${error.code}`,
      );
    }

    void reply
      .status(error.status)
      .headers(error.headers ?? {})
      .type('application/json; charset=utf-8')
      .send(errorBody(error));
  }

  private toAppException(exception: unknown, bodyLimit?: number): AppException {
    if (exception instanceof AppException) return exception;
    // PostgreSQL or Redis away: a retry later will do, so say so (not 500).
    if (isDependencyUnavailable(exception)) return unavailable();
    if (exception instanceof HttpException) {
      // Fastify's own errors (body parsing, limits) arrive wrapped, the original as the cause.
      if (isFrameworkError(exception.cause)) {
        const cause = exception.cause;
        return fromStatus(cause.statusCode, cause.message, cause.code, bodyLimit);
      }
      const response = exception.getResponse();
      const message =
        typeof response === 'string'
          ? response
          : typeof (response as { message?: unknown }).message === 'string'
            ? (response as { message: string }).message
            : exception.message;
      return fromStatus(exception.getStatus(), message);
    }
    if (isFrameworkError(exception)) {
      return fromStatus(exception.statusCode, exception.message, exception.code, bodyLimit);
    }
    return new AppException('internal_error', 'Internal server error');
  }
}
