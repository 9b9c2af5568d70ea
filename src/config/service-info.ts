import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest package.json above this module (src/, dist/ or any other build layout). */
function readPackageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      return (JSON.parse(readFileSync(candidate, 'utf8')) as { version: string }).version;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found above the service code');
    dir = parent;
  }
}

export const SERVICE_NAME = 'messaging-connector';
/** package.json's version, reported by GET /health. */
export const SERVICE_VERSION = readPackageVersion();
