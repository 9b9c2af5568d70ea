import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv } from 'ajv';
import { load } from 'js-yaml';

/** The platform's published OpenAPI description (MIT licensed), kept in test/fixtures. */
const REFERENCE = resolve(
  process.cwd(),
  'test/fixtures/platform-business-messaging-openapi-v23.yaml',
);

interface OpenApi {
  paths: Record<
    string,
    Record<
      string,
      {
        requestBody?: {
          content?: Record<string, { examples?: Record<string, { value: unknown }> }>;
        };
      }
    >
  >;
}

/** The reference uses the platform's public product name where we use `messenger`. */
function translate(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value)
      .replaceAll('whatsapp_business_account', 'messenger_business_account')
      .replaceAll('"whatsapp"', '"messenger"'),
  ) as unknown;
}

/** The request examples of one path and method, by name, translated to our names. */
export function referenceExamples(path: string, method = 'post'): Record<string, unknown> {
  const spec = load(readFileSync(REFERENCE, 'utf8')) as OpenApi;
  const examples =
    spec.paths[path][method].requestBody?.content?.['application/json']?.examples ?? {};
  return Object.fromEntries(
    Object.entries(examples).map(([name, example]) => [name, translate(example.value)]),
  );
}

/**
 * Checks a request body against the reference's schema for one path and
 * method (its `$ref`s resolved within the description); the errors, empty
 * when it validates. Names are translated as the examples are.
 */
export function referenceBodyErrors(path: string, method: string, body: unknown): string[] {
  const spec = translate(load(readFileSync(REFERENCE, 'utf8'))) as Record<string, unknown>;
  const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
  ajv.addSchema({ ...spec, $id: 'reference' });
  const pointer = ['paths', path, method, 'requestBody', 'content', 'application/json', 'schema']
    .map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1'))
    .join('/');
  const validate = ajv.compile({ $ref: `reference#/${pointer}` });
  return validate(body)
    ? []
    : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message ?? ''}`);
}
