import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { AppConfig } from './app-config.js';

/**
 * Secrets every production deployment must set. In development each has a
 * fixed fallback (stable across restarts, so encrypted tokens stay readable)
 * and a loud warning.
 */
const DEV_SECRET_FALLBACKS = {
  PLATFORM_VERIFY_TOKEN: 'dev-verify-token-change-me',
  PLATFORM_APP_SECRET: 'dev-app-secret-change-me',
  ADMIN_PASSWORD: 'dev-admin-password',
  JWT_SECRET: 'dev-jwt-secret-change-me-0123456789abcdef',
  ENCRYPTION_KEY: createHash('sha256').update('messaging-connector-dev-key').digest('hex'),
} as const;

export type Environment = Record<string, string | undefined>;

/** Settings that hold a secret (or carry one, as a URL's password): checked in production. */
const SECRET_SETTINGS = [
  'PLATFORM_VERIFY_TOKEN',
  'PLATFORM_APP_SECRET',
  'ADMIN_PASSWORD',
  'JWT_SECRET',
  'ENCRYPTION_KEY',
  'ENCRYPTION_PREVIOUS_KEYS',
  'API_KEY',
  'METRICS_TOKEN',
  'AGENT_MODULE_TOKEN',
  'DATABASE_URL',
  'REDIS_URL',
] as const;

/** Words that mark a value nobody filled in (the example Secret says CHANGE_ME). */
const PLACEHOLDER =
  /change[\s_-]?(me|it|this)|placeholder|replace[\s_-]?me|your[\s_-]?(secret|password|token|key)|<[^>]*>|\$\{[^}]*\}|^x{4,}$|dummy/i;

export const PRODUCTION_MIN_ADMIN_PASSWORD = 12;

/** Bits per character of a string's own letter frequencies. */
function entropyPerCharacter(value: string): number {
  const counts = new Map<string, number>();
  for (const character of value) counts.set(character, (counts.get(character) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / value.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** 32+ characters that look random (`openssl rand -base64 48` does; `jjjj…` or a word does not). */
export function looksRandom(value: string): boolean {
  return value.length >= 32 && new Set(value).size >= 12 && entropyPerCharacter(value) >= 3.5;
}

/**
 * What production must not start with: a development fallback, a placeholder
 * left from an example, a short admin password or a guessable JWT key.
 */
function productionProblems(values: Record<string, string>): string[] {
  const problems: string[] = [];
  const fallbacks = new Set<string>(Object.values(DEV_SECRET_FALLBACKS));
  for (const name of SECRET_SETTINGS) {
    const value = values[name];
    if (value === undefined) continue;
    const parts = value.split(',').map((part) => part.trim());
    if (parts.some((part) => fallbacks.has(part))) {
      problems.push(`${name} is a development fallback: set a secret of your own`);
    } else if (PLACEHOLDER.test(value)) {
      problems.push(`${name} holds a placeholder (such as CHANGE_ME): set the real value`);
    }
  }
  if ((values.ADMIN_PASSWORD?.length ?? 0) < PRODUCTION_MIN_ADMIN_PASSWORD) {
    problems.push(
      `ADMIN_PASSWORD must be at least ${PRODUCTION_MIN_ADMIN_PASSWORD} characters when NODE_ENV=production`,
    );
  }
  if (!looksRandom(values.JWT_SECRET ?? '')) {
    problems.push(
      'JWT_SECRET must be 32+ random characters when NODE_ENV=production (openssl rand -base64 48)',
    );
  }
  return problems;
}

export class ConfigValidationError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.join('\n')}`);
    this.name = 'ConfigValidationError';
  }
}

export interface LoadedConfig {
  config: AppConfig;
  /** Problems worth a loud warning that do not stop the process (development fallbacks). */
  warnings: string[];
}

function collectMessages(errors: ValidationError[]): string[] {
  return errors.flatMap((error) => {
    const own = Object.values(error.constraints ?? {});
    // One line per variable: the first rule it breaks says what is expected.
    return own.length > 0 ? [own[0]] : collectMessages(error.children ?? []);
  });
}

/**
 * Builds the validated configuration from an environment. Throws
 * ConfigValidationError with one line per missing or invalid variable.
 */
export function loadConfig(env: Environment): LoadedConfig {
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value.trim() !== '') values[name] = value.trim();
  }

  const production = values.NODE_ENV === 'production';
  const problems: string[] = [];
  const warnings: string[] = [];
  for (const [name, fallback] of Object.entries(DEV_SECRET_FALLBACKS)) {
    if (values[name] !== undefined) continue;
    if (production) {
      problems.push(`${name} is required when NODE_ENV=production`);
    } else {
      values[name] = fallback;
      warnings.push(`${name} is not set: using an insecure development fallback`);
    }
  }
  if (production && values.METRICS_TOKEN === undefined) {
    problems.push('METRICS_TOKEN is required when NODE_ENV=production (it guards GET /metrics)');
  }

  const config = plainToInstance(AppConfig, values, { excludeExtraneousValues: false });
  problems.push(
    ...collectMessages(validateSync(config, { skipMissingProperties: false })).filter(
      (line) => !problems.some((p) => p.split(' ')[0] === line.split(' ')[0]),
    ),
  );
  if (config.MESSAGE_BUFFER_MAX_WAIT < config.MESSAGE_BUFFER_DELAY) {
    problems.push('MESSAGE_BUFFER_MAX_WAIT must not be less than MESSAGE_BUFFER_DELAY');
  }
  if (production) {
    // One line per variable: the first problem found with it.
    const named = new Set(problems.map((line) => line.split(' ')[0]));
    problems.push(...productionProblems(values).filter((line) => !named.has(line.split(' ')[0])));
  }
  if (problems.length > 0) throw new ConfigValidationError(problems);
  return { config, warnings };
}

/** The only place that reads process.env: the process environment, over a .env file when present. */
export function loadConfigFromProcess(envFile = '.env'): LoadedConfig {
  if (existsSync(envFile)) process.loadEnvFile(envFile);
  return loadConfig(process.env);
}

/**
 * For a process's entry point: the configuration, or, when it is invalid,
 * one line per problem on stderr and exit 1.
 */
export function loadConfigOrExit(): LoadedConfig {
  try {
    return loadConfigFromProcess();
  } catch (error) {
    if (!(error instanceof ConfigValidationError)) throw error;
    for (const line of error.problems) process.stderr.write(`${line}\n`);
    process.exit(1);
  }
}
