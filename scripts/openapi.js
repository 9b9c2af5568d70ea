// Writes the API description that /docs-json serves, built from src/ without dist/, a
// database, Redis or the platform (src/openapi-offline.ts): `npm run lint:openapi` lints it
// with Redocly. Usage: node scripts/openapi.js [--out <file>] (standard output without --out).
import { mkdir, writeFile } from 'node:fs/promises';
import { register } from 'node:module';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';

register('./ts-hooks.js', import.meta.url);

const { values } = parseArgs({ options: { out: { type: 'string' } } });
/** @type {{ offlineOpenApiDocument(): Promise<object> }} */
const { offlineOpenApiDocument } = await import('../src/openapi-offline.ts');
const json = `${JSON.stringify(await offlineOpenApiDocument(), null, 2)}\n`;
if (values.out) {
  const file = resolve(values.out);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, json);
  process.stderr.write(`OpenAPI document written to ${values.out}\n`);
} else {
  process.stdout.write(json);
}
