import helmet from '@fastify/helmet';
import { NestFactory } from '@nestjs/core';
import { serveConsole } from './console/serve-console.js';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger, PinoLogger } from 'nestjs-pino';
import { AppModule } from './app.module.js';
import { serveQueueDashboard } from './admin/queue-dashboard.js';
import { serveOpenApi } from './openapi.js';
import { MetricsService } from './metrics/metrics.service.js';
import { errorBody } from './common/all-exceptions.filter.js';
import { AppException } from './common/app.exception.js';
import { discardRest } from './common/refused-body.js';
import { REQUEST_ID_HEADER, requestIdFor } from './common/request-id.js';
import type { RouteLimits } from './common/route-limits.js';
import type { AppConfig } from './config/app-config.js';
import { MAX_UPLOAD_BYTES } from './media/media-limits.js';

/** Largest request body of any route that does not say otherwise (every JSON route fits). */
export const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * How long a client may take to send a whole request, headers and body
 * (Fastify's default is no limit, so a client dripping bytes held its
 * connection forever). Long enough for a 100 MB document at 400 KB/s, or a
 * campaign's 256 MB CSV at 1 MB/s; answers are not bounded by it (it ends
 * once the body is in).
 */
export const REQUEST_TIMEOUT_MS = 300_000;

/**
 * Fastify's default JSON parser as it runs (and as Nest calls it): on the
 * body's bytes, answering through `done`. Its declared type has a string body.
 */
type JsonParser = (
  request: unknown,
  body: Buffer,
  done: (error: Error | null, body?: unknown) => void,
) => void;

const draining = new WeakSet<NestFastifyApplication>();

/**
 * Routes whose successful answers are logged at debug only: the platform's
 * deliveries (thousands a second; the metrics count them) and the probes.
 */
const QUIET_ROUTES = new Set([
  'POST /webhooks/messenger',
  'GET /health',
  'GET /health/live',
  'GET /health/ready',
]);

export interface ServedRoute {
  method: string;
  url: string;
}

/** Every route an app serves, as registered (for the OpenAPI completeness check). */
export const servedRoutes = new WeakMap<NestFastifyApplication, ServedRoute[]>();

/**
 * Stops taking requests and waits for those in flight, then closes queues,
 * Redis and the database (their onApplicationShutdown hooks).
 */
export async function shutdownApp(app: NestFastifyApplication): Promise<void> {
  draining.add(app);
  await app.close();
}

/** Builds the application exactly as main.ts runs it (tests use the same). */
export async function createApp(config: AppConfig): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: requestIdFor,
    requestIdHeader: false,
    trustProxy: config.TRUST_PROXY.length > 0 ? config.TRUST_PROXY : false,
    return503OnClosing: true,
    requestTimeout: REQUEST_TIMEOUT_MS,
    // A signed media link (GET /media-links/{token}) is longer than the default 100.
    routerOptions: { maxParamLength: 512 },
    // Uploads are streamed (POST /media/upload), one file per request.
    multipart: { limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 5, parts: 6 } },
  });
  const routes: ServedRoute[] = [];
  adapter.getInstance().addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url });
    const limits = route.config as RouteLimits | undefined;
    if (limits?.bodyLimit) route.bodyLimit = limits.bodyLimit;
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, {
    bufferLogs: true,
    // A boot failure throws (server.ts waits and boots again, or exits) rather than exiting inside Nest.
    abortOnError: false,
    // The webhook signature is checked over the bytes received, never re-serialised JSON.
    rawBody: true,
  });
  try {
    await configure(app, adapter, config);
  } catch (error) {
    // What the boot opened (pools, Redis clients, workers) is closed, so that
    // the process can wait for a dependency and boot again.
    await app.close().catch(() => undefined);
    throw error;
  }
  servedRoutes.set(app, routes);
  return app;
}

async function configure(
  app: NestFastifyApplication,
  adapter: FastifyAdapter,
  config: AppConfig,
): Promise<void> {
  app.useLogger(app.get(Logger));
  // Nest's JSON parser, except on routes that read only the raw bytes (the webhook).
  const parseJson = adapter
    .getInstance()
    .getDefaultJsonParser('error', 'error') as unknown as JsonParser;
  app.useBodyParser('application/json', { bodyLimit: BODY_LIMIT_BYTES }, (request, body, done) => {
    if ((request.routeOptions.config as RouteLimits).rawBodyOnly) done(null, undefined);
    else parseJson(request, body, done);
  });
  // nosniff, no framing, no referrer on every answer. No CSP: the answers are
  // JSON, and the docs and the queue dashboard run inline scripts.
  await app.register(helmet, {
    contentSecurityPolicy: false,
    frameguard: { action: 'deny' },
    crossOriginEmbedderPolicy: false,
    referrerPolicy: { policy: 'no-referrer' },
  });
  if (config.runsHttpApi) {
    serveOpenApi(app);
    await serveQueueDashboard(app, config);
    await serveConsole(app);
  }
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onRequest', async (request, reply) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    // Shutting down: queues close before the listener does, and a request that
    // came meanwhile would start work the process may not finish. Refused now.
    if (draining.has(app)) {
      const refusal = new AppException(
        'unavailable',
        'This process is shutting down; retry (another replica takes the request)',
        undefined,
        { 'retry-after': '1' },
      );
      return reply
        .code(503)
        .headers({ 'retry-after': '1', connection: 'close' })
        .send(errorBody(refusal));
    }
  });
  // An error answered before the body was read (over its limit, an unsupported
  // type): the sender is still writing, and closing a socket with unread bytes
  // resets it, so it would see EPIPE instead of the answer. Only routes that
  // need it (the webhook: the platform writes all before it reads) read the
  // rest and throw it away first, up to a size and a deadline; everywhere
  // else, and past those bounds, the answer closes the connection at once.
  fastify.addHook('onError', async (request, reply) => {
    if (request.raw.complete) return;
    const budget = (request.routeOptions.config as RouteLimits | undefined)?.refusedBodyDiscard;
    if (budget && (await discardRest(request.raw, budget))) {
      // Fastify asks to close because the client may send more: it has sent it all.
      reply.removeHeader('connection');
    } else {
      void reply.header('connection', 'close');
    }
  });
  // While draining, answers close their connection: a keep-alive socket left idle
  // after its last in-flight answer would otherwise hold shutdown until it times out.
  fastify.addHook('onSend', async (_request, reply) => {
    if (draining.has(app)) void reply.header('connection', 'close');
  });
  // Straight to pino, without redaction: the line is built here of fields that
  // carry no secret, and redacting it cost more than writing it (about 4 µs).
  const requestLog = PinoLogger.root.child({ context: 'Http' }, { redact: [] });
  const metrics = app.get(MetricsService);
  fastify.addHook('onResponse', async (request, reply) => {
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status: String(reply.statusCode),
    };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    const quiet = reply.statusCode < 400 && QUIET_ROUTES.has(`${labels.method} ${labels.route}`);
    // The webhook's thousands a second: no line is built when debug is off.
    if (quiet && !requestLog.isLevelEnabled('debug')) return;
    const line = {
      reqId: request.id,
      method: request.method,
      // The path only: query strings can carry secrets (hub.verify_token); a signed
      // media link's token is one too (a link not used up could be replayed).
      url: labels.route === '/media-links/:token' ? labels.route : request.url.split('?')[0],
      statusCode: reply.statusCode,
      ms: Math.round(reply.elapsedTime),
    };
    if (reply.statusCode >= 500) requestLog.error(line, 'request failed');
    else if (quiet) requestLog.debug(line, 'request');
    else requestLog.info(line, 'request');
  });
  await app.init();
  await fastify.ready();
}
