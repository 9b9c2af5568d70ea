import 'reflect-metadata';
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp, shutdownApp } from './app.setup.js';
import { logDestination, startupLogger } from './config/logger.options.js';
import { loadConfigOrExit } from './config/load-config.js';
import { isDependencyUnavailable } from './common/unavailable.js';
import { Standby } from './startup/standby.js';

/** How long in-flight work may take to finish after SIGTERM before the process gives up. */
const SHUTDOWN_GRACE_MS = 25_000;

/** The wait before booting again after an interrupted boot: doubles from the first to the last. */
const BOOT_RETRY_FIRST_MS = 1000;
const BOOT_RETRY_MAX_MS = 30_000;

/** Exits after writing out the buffered log lines. */
function exit(code: number): never {
  try {
    logDestination.flushSync();
  } catch {
    // nothing buffered, or stdout already gone
  }
  process.exit(code);
}

/** Stops taking requests, lets in-flight work finish, closes everything, exits. */
function drain(app: NestFastifyApplication, signal: string): void {
  const logger = new Logger('Bootstrap');
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
}

/** Why a boot failed, in a few words, without a URL (it may hold a password). */
function bootFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\w+:\/\/\S+/g, '<url>').slice(0, 160);
}

async function bootstrap(): Promise<void> {
  const { config, warnings } = loadConfigOrExit();
  const startLog = startupLogger(config);
  let state: { phase: 'waiting' | 'booting' } | { phase: 'running'; app: NestFastifyApplication } =
    { phase: 'waiting' };
  let signalled: string | undefined;
  const onSignal = (signal: string): void => {
    if (signalled) return;
    signalled = signal;
    if (state.phase === 'running') return drain(state.app, signal);
    if (state.phase === 'waiting') {
      // Waiting for PostgreSQL or Redis: nothing has started, nothing to finish.
      startLog.info(`${signal} received while waiting for PostgreSQL and Redis: exiting`);
      exit(0);
    }
    // Booting: workers may already run; drained as soon as the boot is over (below).
    startLog.info(`${signal} received while booting: stopping once booted`);
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));

  // The port answers from now on: liveness 200, readiness 503 until the app has it.
  const standby = await Standby.listen(config, startLog);
  let app: NestFastifyApplication;
  // A failure classed as unavailable while the checks pass (too many connections)
  // would otherwise boot again at once, forever.
  let retryDelayMs = BOOT_RETRY_FIRST_MS;
  for (;;) {
    await standby.waitForDependencies();
    state = { phase: 'booting' };
    try {
      app = await createApp(config);
      break;
    } catch (error) {
      // A dependency that stops answering during the boot (PostgreSQL restarting
      // during the migrations) is waited for again, as at start, not a crash loop.
      standby.recheck();
      if (!isDependencyUnavailable(error) && !(await standby.anyMissing())) throw error;
      if (signalled) {
        startLog.info(`${signalled} received while booting: exiting`);
        exit(0);
      }
      startLog.warn(
        `boot interrupted: a dependency stopped answering (${bootFailure(error)}); ` +
          `booting again in ${retryDelayMs / 1000} s, once PostgreSQL and Redis answer`,
      );
      state = { phase: 'waiting' };
      await sleep(retryDelayMs);
      retryDelayMs = Math.min(retryDelayMs * 2, BOOT_RETRY_MAX_MS);
    }
  }
  const logger = new Logger('Bootstrap');
  for (const warning of warnings) logger.warn(`INSECURE CONFIGURATION: ${warning}`);

  await app.listen({ port: config.PORT, host: config.HOST, ...(await standby.handOver()) });
  state = { phase: 'running', app };
  if (signalled) return drain(app, signalled);
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
