import { readFileSync } from 'node:fs';

const packageJson = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
) as { version: string };

export const SERVICE_NAME = 'messaging-connector';
/** package.json's version: found two levels up from both src/config and dist/config. */
export const SERVICE_VERSION = packageJson.version;
