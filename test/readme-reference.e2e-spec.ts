import { readFileSync } from 'node:fs';
import { getMetadataStorage } from 'class-validator';
import { ERROR_STATUS, type ErrorCode } from '../src/common/error-codes.js';
import { AppConfig } from '../src/config/app-config.js';
import { codeSpans, section, tableRows } from './support/markdown.js';

/*
 * The README's reference tables against the code they describe, so that
 * neither can change without the other: the configuration table against
 * AppConfig, the error table against ERROR_STATUS. (The API table is checked
 * against the served routes in openapi.e2e-spec.ts.)
 */

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** Every setting AppConfig reads: its validated properties and those with a default. */
function configSettings(): string[] {
  const validated = getMetadataStorage()
    .getTargetValidationMetadatas(AppConfig, '', true, false)
    .map((rule) => rule.propertyName);
  return [...new Set([...validated, ...Object.keys(new AppConfig())])].sort();
}

describe('README', () => {
  it('lists every setting of AppConfig in the configuration table, and no other', () => {
    const rows = tableRows(section(README, '## Configuration'));
    const documented = rows
      .flatMap(([names]) => codeSpans(names))
      .filter((name) => /^[A-Z][A-Z0-9_]*$/.test(name));
    expect(new Set(documented).size).toBe(documented.length);
    const settings = configSettings();
    expect(settings.length).toBeGreaterThan(30);
    expect(documented.sort()).toEqual(settings);
  });

  it('lists every error code with its status in the error table, and no other', () => {
    const rows = tableRows(section(README, '### Errors'));
    const documented = rows.flatMap(([status, codes]) =>
      codeSpans(codes).map((code) => ({ code, status: Number(status) })),
    );
    expect(documented.length).toBe(new Set(documented.map(({ code }) => code)).size);
    const expected = (Object.keys(ERROR_STATUS) as ErrorCode[]).map((code) => ({
      code,
      status: ERROR_STATUS[code],
    }));
    const byCode = (a: { code: string }, b: { code: string }): number =>
      a.code.localeCompare(b.code);
    expect(documented.sort(byCode)).toEqual(expected.sort(byCode));
  });
});
