import {
  ValidationPipe,
  type ArgumentMetadata,
  type Type,
  type ValidationError,
} from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { AppException, type FieldError } from './app.exception.js';

/** Deepest JSON a request body may nest (no route needs more than a few levels). */
export const MAX_BODY_DEPTH = 32;

// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/**
 * Every DTO rule gives its own message in the project's voice ("must be 1 to
 * 4096 characters"; the field is named in details[].field). These are the
 * messages class-validator makes itself, for checks no decorator states.
 */
const RULE_MESSAGES: Record<string, string> = {
  whitelistValidation: 'is not an accepted field',
  // A value validated against a class with no rules (a safety net: no DTO has one).
  unknownValue: 'must be an object',
};

function flatten(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const property = error.property as string | undefined;
    const field =
      property === undefined ? parent || 'body' : parent ? `${parent}.${property}` : property;
    const own = Object.entries(error.constraints ?? {}).map(([rule, message]) => ({
      field,
      message: RULE_MESSAGES[rule] ?? message,
    }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/** Turns class-validator errors into one 400 naming every failing field. */
export function validationFailed(errors: ValidationError[]): AppException {
  return AppException.validation(flatten(errors));
}

/** A path parameter or query value with a control character (NUL…) is refused, never passed on. */
function assertPrintable(value: unknown, field: string | undefined): void {
  const fields =
    typeof value === 'string'
      ? [[field ?? 'value', value] as const]
      : value && typeof value === 'object'
        ? Object.entries(value as Record<string, unknown>).flatMap(([key, item]) =>
            (Array.isArray(item) ? item : [item]).map((one) => [key, one] as const),
          )
        : [];
  const bad = fields.filter(
    ([key, item]) =>
      CONTROL_CHARACTER.test(key) || (typeof item === 'string' && CONTROL_CHARACTER.test(item)),
  );
  if (bad.length > 0) {
    throw AppException.validation(
      bad.map(([key]) => ({
        field: key.replace(CONTROL_CHARACTER, '?'),
        message: 'contains a control character',
      })),
    );
  }
}

/** Refuses a body nested deeper than MAX_BODY_DEPTH, without recursion (so without a stack to overflow). */
function assertShallow(value: unknown): void {
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth > MAX_BODY_DEPTH) {
      throw AppException.validation([
        { field: 'body', message: `is nested more than ${MAX_BODY_DEPTH} levels deep` },
      ]);
    }
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
}

/** Each DTO's declared fields, read once: class-validator assembles them anew on every call. */
const declaredFields = new WeakMap<object, ReadonlySet<string>>();

/** The top-level fields of a body that its DTO does not declare. */
function unknownFields(value: unknown, metatype: ArgumentMetadata['metatype']): string[] {
  if (!metatype || !value || typeof value !== 'object' || Array.isArray(value)) return [];
  let known = declaredFields.get(metatype);
  if (!known) {
    known = new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(metatype, '', true, false)
        .map((rule) => rule.propertyName),
    );
    declaredFields.set(metatype, known);
  }
  const declared = known;
  return declared.size === 0 ? [] : Object.keys(value).filter((key) => !declared.has(key));
}

/**
 * The one global pipe: class-validator with whitelist, forbidNonWhitelisted
 * and transform, after cheap checks that keep hostile input away from the
 * deep conversion: control characters in path and query values, bodies
 * nested too deeply, unknown top-level fields. Given an `expectedType`, it
 * checks a parameter whose class the handler's signature cannot name.
 */
export class AppValidationPipe extends ValidationPipe {
  constructor(expectedType?: Type) {
    super({
      expectedType,
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      // One message per field: the first rule it breaks.
      stopAtFirstError: true,
      validationError: { target: false, value: false },
      exceptionFactory: validationFailed,
    });
  }

  override async transform(value: unknown, given: ArgumentMetadata): Promise<unknown> {
    const metadata = this.expectedType ? { ...given, metatype: this.expectedType } : given;
    if (metadata.type === 'param' || metadata.type === 'query') {
      assertPrintable(value, metadata.data);
    } else if (metadata.type === 'body') {
      assertShallow(value);
      const unknown = unknownFields(value, metadata.metatype);
      if (unknown.length > 0) {
        // Unknown fields are set aside unconverted; the others are still checked,
        // so the answer names every failing field.
        const known = Object.fromEntries(
          Object.entries(value as Record<string, unknown>).filter(
            ([key]) => !unknown.includes(key),
          ),
        );
        const refused = unknown.map((field) => ({ field, message: 'is not an accepted field' }));
        try {
          await super.transform(known, metadata);
        } catch (error) {
          if (!(error instanceof AppException) || !error.details) throw error;
          throw AppException.validation([...(error.details as FieldError[]), ...refused]);
        }
        throw AppException.validation(refused);
      }
    }
    return super.transform(value, metadata) as Promise<unknown>;
  }
}
