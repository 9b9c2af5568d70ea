import { applyDecorators, type Type } from '@nestjs/common';
import {
  ApiResponse,
  getSchemaPath,
  type ExampleObject,
  type HeadersObject,
  type ResponseObject,
  type ResponsesObject,
} from '@nestjs/swagger';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { errorBody } from './all-exceptions.filter.js';
import { AppException } from './app.exception.js';
import { ErrorBodyDto } from './error-body.dto.js';
import { ERROR_DESCRIPTIONS, type ErrorCode } from './error-codes.js';
import { validationFailed } from './validation.js';

/** A UUID as the examples show it (an instance, a key, a turn). */
export const EXAMPLE_ID = '3f0c9a8e-4b7d-4c1e-9a55-0d2b6f1e7c42';

/**
 * An error answer shown in the API description: what the service throws in
 * that case. Its example is the body the global filter writes for it, so the
 * example cannot drift from the real answer.
 */
export interface DocumentedError {
  error: AppException;
  /** The example's title; the error's code when absent. */
  summary?: string;
}

type ErrorInput = AppException | DocumentedError;

const documented = (input: ErrorInput): DocumentedError =>
  input instanceof AppException ? { error: input } : input;

/** Statuses whose answers carry Retry-After. */
const RETRY_AFTER_STATUSES = new Set([429, 503]);

const RETRY_AFTER: HeadersObject = {
  'Retry-After': {
    description: 'Seconds to wait before trying again',
    schema: { type: 'integer', example: 5 },
  },
};

function describeCodes(codes: ErrorCode[]): string {
  return [...new Set(codes)].map((code) => `\`${code}\`: ${ERROR_DESCRIPTIONS[code]}`).join('\n\n');
}

function exampleName(code: ErrorCode, taken: Set<string>): string {
  let name: string = code;
  for (let n = 2; taken.has(name); n++) name = `${code}_${n}`;
  taken.add(name);
  return name;
}

function exampleOf(input: DocumentedError): { summary: string; value: Record<string, unknown> } {
  return { summary: input.summary ?? input.error.code, value: errorBody(input.error) };
}

/** The errors grouped by HTTP status, in the order given. */
function byStatus(errors: ErrorInput[]): Map<number, DocumentedError[]> {
  const groups = new Map<number, DocumentedError[]>();
  for (const input of errors.map(documented)) {
    const group = groups.get(input.error.status) ?? [];
    group.push(input);
    groups.set(input.error.status, group);
  }
  return groups;
}

/**
 * Documents the error answers of an operation, one response per status with
 * an example for each error. Use it once per route: examples are named per
 * use, so a second use could replace the first one's of the same name.
 */
export function ApiErrors(...errors: ErrorInput[]): MethodDecorator {
  const decorators = [...byStatus(errors)].map(([status, group]) => {
    const taken = new Set<string>();
    return ApiResponse({
      status,
      description: describeCodes(group.map((input) => input.error.code)),
      type: ErrorBodyDto,
      examples: Object.fromEntries(
        group.map((input) => [exampleName(input.error.code, taken), exampleOf(input)]),
      ),
      ...(RETRY_AFTER_STATUSES.has(status) ? { headers: RETRY_AFTER } : {}),
    });
  });
  return applyDecorators(...decorators);
}

function isResponseObject(value: ResponsesObject[string]): value is ResponseObject {
  return value !== undefined && !('$ref' in value);
}

/**
 * Adds error answers to an operation's responses in the document: a new
 * response per new status, or more examples (and codes in the description)
 * on an existing error response of that status.
 */
export function addErrorResponses(responses: ResponsesObject, errors: ErrorInput[]): void {
  for (const [status, group] of byStatus(errors)) {
    const existing = responses[status];
    if (existing !== undefined && !isResponseObject(existing)) continue;
    const response: ResponseObject = existing ?? { description: '' };
    const media = response.content?.['application/json'] ?? {
      schema: { $ref: getSchemaPath(ErrorBodyDto) },
    };
    const examples = (media.examples ?? {}) as Record<string, ExampleObject>;
    const described = new Set(
      Object.values(examples).map((example) => (example.value as { code?: ErrorCode })?.code),
    );
    const taken = new Set(Object.keys(examples));
    for (const input of group) examples[exampleName(input.error.code, taken)] = exampleOf(input);
    const newCodes = group.map((input) => input.error.code).filter((code) => !described.has(code));
    if (newCodes.length > 0) {
      response.description = [response.description, describeCodes(newCodes)]
        .filter((part) => part.length > 0)
        .join('\n\n');
    }
    response.content = { ...response.content, 'application/json': { ...media, examples } };
    if (RETRY_AFTER_STATUSES.has(status))
      response.headers = { ...RETRY_AFTER, ...response.headers };
    responses[status] = response;
  }
}

/**
 * The `validation_failed` answer to a request: `value` run through the same
 * validation as the global pipe (class-transformer, then class-validator with
 * whitelisting and one message per field).
 */
export function invalidRequest(
  dto: Type<object>,
  value: object,
  summary?: string,
): DocumentedError {
  const errors = validateSync(plainToInstance(dto, value), {
    whitelist: true,
    forbidNonWhitelisted: true,
    stopAtFirstError: true,
    validationError: { target: false, value: false },
  });
  // Never a boot failure over documentation: a request the DTO now accepts gives
  // an example naming no field, which the OpenAPI test refuses.
  return { error: validationFailed(errors), summary };
}

/** The AppException `action` throws (e.g. a pipe given a bad value), for an example. */
export function thrownBy(action: () => unknown, summary?: string): DocumentedError {
  try {
    action();
  } catch (error) {
    if (error instanceof AppException) return { error, summary };
    throw error;
  }
  throw new Error('thrownBy: the action threw nothing');
}
