// Node module hooks that run the service's TypeScript sources without building them, as Jest
// does: each .ts file is compiled by swc with Jest's options (swc-options.js: legacy decorators
// with their metadata, which Node's own type stripping does not handle), and an import of
// `./x.js` from a .ts file finds `./x.ts`. Registered by scripts/openapi.js.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { transform } from '@swc/core';
import { SWC_TS } from './swc-options.js';

/** @type {import('node:module').ResolveHook} */
export async function resolve(specifier, context, nextResolve) {
  if (context.parentURL?.endsWith('.ts') && /^\.{1,2}\/.*\.js$/.test(specifier)) {
    const url = new URL(specifier.replace(/\.js$/, '.ts'), context.parentURL);
    if (existsSync(fileURLToPath(url)))
      return { url: url.href, format: 'module', shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

/** @type {import('node:module').LoadHook} */
export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const filename = fileURLToPath(url);
  const { code } = await transform(await readFile(filename, 'utf8'), { ...SWC_TS, filename });
  return { format: 'module', source: code, shortCircuit: true };
}
