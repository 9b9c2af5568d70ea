import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createApp, shutdownApp } from './app.setup.js';
import { logDestination } from './config/logger.options.js';
import { loadConfigOrExit } from './config/load-config.js';
import { preflight } from './preflight.js';

/** How long in-flight work may take to finish after SIGTERM before the process gives up. */
const SHUTDOWN_GRACE_MS = 25_000;

/** Exits after writing out the buffered log lines. */
function exit(code: number): never {
  try {
    logDestination.flushSync();
  } catch {
    // nothing buffered, or stdout already gone
  }
  process.exit(code);
}

async function bootstrap(): Promise<void> {
  const { config, warnings } = loadConfigOrExit();
  const unreachable = await preflight(config);
  if (unreachable.length > 0) {
    for (const line of unreachable) process.stderr.write(`${line}\n`);
    exit(1);
  }
  const app = await createApp(config);
  const logger = new Logger('Bootstrap');
  for (const warning of warnings) logger.warn(`INSECURE CONFIGURATION: ${warning}`);

  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) return;
    closing = true;
    logger.log(`${signal} received: finishing in-flight work`);
    setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
    shutdownApp(app).then(
      () => exit(0),
      (error: unknown) => {
        logger.error(`shutdown failed: ${String(error)}`);
        exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));

  await app.listen({ port: config.PORT, host: config.HOST });
  const base = `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${config.PORT}`;
  logger.log(`${config.APP_ROLE} process listening on ${config.HOST}:${config.PORT}`);
  if (config.runsHttpApi) {
    logger.log(
      `API docs at ${base}/docs; the platform's webhook is POST ${base}/webhooks/messenger ` +
        "(verify token: PLATFORM_VERIFY_TOKEN or an instance's webhook_verify_token)",
    );
  }
}

bootstrap().catch((error: unknown) => {
  process.stderr.write(`boot failed: ${error instanceof Error ? error.message : String(error)}\n`);
  exit(1);
});
