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

  const config = plainToInstance(AppConfig, values, { excludeExtraneousValues: false });
  problems.push(
    ...collectMessages(validateSync(config, { skipMissingProperties: false })).filter(
      (line) => !problems.some((p) => p.split(' ')[0] === line.split(' ')[0]),
    ),
  );
  if (config.MESSAGE_BUFFER_MAX_WAIT < config.MESSAGE_BUFFER_DELAY) {
    problems.push('MESSAGE_BUFFER_MAX_WAIT must not be less than MESSAGE_BUFFER_DELAY');
  }
  if (problems.length > 0) throw new ConfigValidationError(problems);
  return { config, warnings };
}

/** The only place that reads process.env: the process environment, over a .env file when present. */
export function loadConfigFromProcess(envFile = '.env'): LoadedConfig {
  if (existsSync(envFile)) process.loadEnvFile(envFile);
  return loadConfig(process.env);
}
