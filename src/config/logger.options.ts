import type { Params } from 'nestjs-pino';
import { pino } from 'pino';
import type { AppConfig } from './app-config.js';

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

/**
 * Log lines are written asynchronously, coalesced while a write is in flight:
 * on the request path a synchronous write per line cost a fifth of the
 * throughput. main.ts flushes the buffer before the process exits.
 */
export const logDestination = pino.destination({ dest: 1, sync: false });

/** Nest's own boot chatter (modules loaded, each route mapped): debug, so info stays readable. */
const FRAMEWORK_CONTEXTS = new Set([
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestFactory',
  'NestApplication',
]);

function isFrameworkLine(args: unknown[]): boolean {
  const context = (args[0] as { context?: unknown } | null)?.context;
  return typeof context === 'string' && FRAMEWORK_CONTEXTS.has(context);
}

const INFO = 30;

/** Pretty lines for a person at a terminal in development; JSON everywhere else. */
function prettyLogs(config: AppConfig): boolean {
  return config.NODE_ENV === 'development' && process.stdout.isTTY;
}

const PRETTY_TRANSPORT = { target: 'pino-pretty', options: { singleLine: true } };

/**
 * The log of the start, before the app (and its logger) exists: the same
 * destination, level and format as the app's lines.
 */
export function startupLogger(config: AppConfig): pino.Logger {
  const options = {
    level: config.LOG_LEVEL,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  const root = prettyLogs(config)
    ? pino({ ...options, transport: PRETTY_TRANSPORT })
    : pino(options, logDestination);
  return root.child({ context: 'Startup' });
}

export function loggerOptions(config: AppConfig): Params {
  const pretty = prettyLogs(config);
  const options = {
    level: config.LOG_LEVEL,
    autoLogging: false,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    hooks: {
      logMethod(
        this: pino.Logger,
        args: Parameters<pino.LogFn>,
        method: pino.LogFn,
        level: number,
      ) {
        if (level === INFO && isFrameworkLine(args)) return this.debug(...args);
        return method.apply(this, args);
      },
    },
  };
  return {
    // Request lines come from one Fastify onResponse hook (app.setup.ts), not per-request middleware.
    forRoutes: [],
    pinoHttp: pretty ? { ...options, transport: PRETTY_TRANSPORT } : [options, logDestination],
  };
}
