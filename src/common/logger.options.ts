import type { Params } from 'nestjs-pino';
import type { AppConfig } from '../config/app-config.js';

/** Wherever these appear in a logged object, pino writes [redacted]. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-hub-signature-256"]',
  '*.access_token',
  '*.password',
  '*.token',
  '*.secret',
  '*.key',
  '*.api_key',
  '*.authorization',
];

export function loggerOptions(config: AppConfig): Params {
  const pretty = config.NODE_ENV === 'development' && process.stdout.isTTY;
  return {
    // Request lines come from one Fastify onResponse hook (app.setup.ts), not per-request middleware.
    forRoutes: [],
    pinoHttp: {
      level: config.LOG_LEVEL,
      autoLogging: false,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      transport: pretty ? { target: 'pino-pretty', options: { singleLine: true } } : undefined,
    },
  };
}
