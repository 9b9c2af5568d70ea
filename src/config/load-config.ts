import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { estimateSecretBits } from '../common/secret-strength.js';
import { AppConfig, decodeEncryptionKey } from './app-config.js';
import { trustsEveryAddress } from './trusted-proxies.js';

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

/**
 * Words that mark a value nobody filled in (the example Secret says CHANGE_ME).
 * A word counts only standing apart (the value's edge or a character that is
 * neither letter nor digit on each side): random base64 holds "dUmMY" now and
 * then (seen in 1 of 40,000 generated keys), and must not be refused for it.
 */
const PLACEHOLDER =
  /(?:^|[^a-z0-9])(?:change[\s_-]?(?:me|it|this)|placeholder|replace[\s_-]?me|your[\s_-]?(?:secret|password|token|key)|dummy)(?=$|[^a-z0-9])|<[^>]*>|\$\{[^}]*\}|^x{4,}$/i;

export const PRODUCTION_MIN_ADMIN_PASSWORD = 12;

/**
 * The random bits (as estimateSecretBits counts them) each secret must carry
 * in production, and how to make one. Keys, which a leaked token or
 * ciphertext lets anyone attack offline, need 80; tokens, only ever guessed
 * through the API, 44; the admin password, guessed only under the login
 * limit, 40. Each bound sits far below what a generated value of the smallest
 * size accepted counts: 32 hex characters (a key's least) count 128 bits and
 * the lowest of a million generated ones 106; 16 hex characters (a token's
 * least) 64, the lowest of a million 45. So a generated value passes, and a
 * repeated character, a sequence or a padded word does not.
 * PLATFORM_APP_SECRET (issued by the platform) and PLATFORM_VERIFY_TOKEN
 * (which guards nothing secret) are only checked for fallbacks and placeholders.
 */
export const SECRET_MIN_BITS = {
  JWT_SECRET: 80,
  ENCRYPTION_KEY: 80,
  ENCRYPTION_PREVIOUS_KEYS: 80,
  API_KEY: 44,
  METRICS_TOKEN: 44,
  AGENT_MODULE_TOKEN: 44,
  ADMIN_PASSWORD: 40,
} as const;

const SECRET_HINTS: Record<keyof typeof SECRET_MIN_BITS, string> = {
  JWT_SECRET: 'openssl rand -base64 48',
  ENCRYPTION_KEY: 'openssl rand -hex 32',
  ENCRYPTION_PREVIOUS_KEYS: 'the keys used before, as they were',
  API_KEY: 'openssl rand -hex 24',
  METRICS_TOKEN: 'openssl rand -hex 24',
  AGENT_MODULE_TOKEN: 'openssl rand -hex 24',
  ADMIN_PASSWORD: 'several unrelated words, or one from a password manager',
};

/**
 * What production must not start with: a development fallback, a placeholder
 * left from an example, a short admin password, a secret that is easy to
 * guess (a repeated character, a sequence, a common word, too short for its
 * alphabet), or proxies that trust every address.
 */
function productionProblems(values: Record<string, string>, config: AppConfig): string[] {
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
  for (const [name, bits] of Object.entries(SECRET_MIN_BITS) as Array<
    [keyof typeof SECRET_MIN_BITS, number]
  >) {
    const value = values[name];
    if (value === undefined) continue;
    const parts = name === 'ENCRYPTION_PREVIOUS_KEYS' ? value.split(',') : [value];
    if (parts.some((part) => secretBits(name, part.trim()) < bits)) {
      // Never the value, nor how far it fell short: that would tell something of it.
      problems.push(
        `${name} is too easy to guess (a repeated character, a sequence, a common word, or too short for the characters it uses): it needs about ${bits} random bits when NODE_ENV=production (${SECRET_HINTS[name]})`,
      );
    }
  }
  if (trustsEveryAddress(config.TRUST_PROXY)) {
    problems.push(TRUSTS_EVERYONE);
  }
  return problems;
}

/**
 * A key's bits are counted on its text and on the bytes it decodes to: the
 * base64 of `passwordpassword…` looks random as text.
 */
function secretBits(name: keyof typeof SECRET_MIN_BITS, value: string): number {
  const text = estimateSecretBits(value);
  if (name !== 'ENCRYPTION_KEY' && name !== 'ENCRYPTION_PREVIOUS_KEYS') return text;
  const key = decodeEncryptionKey(value);
  return key ? Math.min(text, estimateSecretBits(key.toString('latin1'))) : text;
}

const TRUSTS_EVERYONE =
  'TRUST_PROXY trusts every address, so any client could claim any address in X-Forwarded-For: name only your proxies (e.g. 10.0.0.0/8)';

export class ConfigValidationError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.join('\n')}`);
    this.name = 'ConfigValidationError';
  }
}

export interface LoadedConfig {
  config: AppConfig;
  /** Problems worth a loud warning that do not stop the process (development fallbacks, a TRUST_PROXY trusting everyone). */
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
    for (const line of productionProblems(values, config)) {
      const name = line.split(' ')[0];
      if (!named.has(name)) problems.push(line);
      named.add(name);
    }
  } else if (trustsEveryAddress(config.TRUST_PROXY)) {
    warnings.push(TRUSTS_EVERYONE);
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
