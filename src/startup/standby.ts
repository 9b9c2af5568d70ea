import { once } from 'node:events';
import { isIP } from 'node:net';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { errorBody } from '../common/all-exceptions.filter.js';
import { REQUEST_ID_HEADER, requestIdFor } from '../common/request-id.js';
import { starting } from '../common/unavailable.js';
import type { AppConfig } from '../config/app-config.js';
import { SERVICE_NAME, SERVICE_VERSION } from '../config/service-info.js';
import type {
  DependenciesDto,
  DependencyState,
  HealthReportDto,
  LivenessDto,
  ReadinessDto,
} from '../health/dto/health.dto.js';
import { CHECK_CACHE_MS, CHECK_TIMEOUT_MS } from '../health/health.service.js';
import { PlatformClient } from '../platform/platform-client.js';
import { dependenciesOf, type Dependency } from './dependency-checks.js';

/** How often a missing dependency is checked again: the process starts about this soon after it answers. */
const CHECK_INTERVAL_MS = 1000;

/** How often a missing dependency's line is repeated while it stays away. */
const REPORT_INTERVAL_MS = 5000;

/**
 * How much of a request's body is read before the 503, so that the sender sees
 * the answer rather than a connection cut mid-write: any body a route takes
 * (the webhook's, 5 MB, is the largest), not a media upload's.
 */
const DRAIN_LIMIT_BYTES = 6 * 1024 * 1024;

const DEVELOPMENT_HINT =
  'for development, `npm run services` starts PostgreSQL and Redis (see "Quick start" in the README)';

/** Each dependency's last verdict: null when it answered, else why not. */
type Verdicts = Map<Dependency, string | null>;

/** The listen options that make another server take this one's listening socket. */
export interface ListeningHandle {
  _handle: unknown;
}

/** Resolves once the request's body has been read (or DRAIN_LIMIT_BYTES of it), or it failed. */
function drained(request: IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    let read = 0;
    request.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > DRAIN_LIMIT_BYTES) resolve();
    });
    request.once('end', resolve);
    request.once('error', resolve);
    request.once('close', resolve);
  });
}

/**
 * What the process is while PostgreSQL or Redis does not answer at start: a
 * small HTTP server on the service's port (liveness 200, readiness 503 naming
 * what is missing, every other route 503 with Retry-After) and a check of each
 * dependency every second, with one line per missing one every few seconds.
 * Once both answer the app boots (migrations, workers, routes) and takes this
 * server's listening socket, so the port never refuses a connection between the two.
 */
export class Standby {
  private readonly dependencies: Dependency[];
  private readonly platform: PlatformClient;
  private readonly server: Server;
  /** The last finished round of checks (the first request waits for the first round). */
  private verdicts: Promise<Verdicts>;
  private platformCheck?: { at: number; state: Promise<DependencyState> };

  private constructor(
    private readonly config: AppConfig,
    private readonly log: Logger,
  ) {
    this.dependencies = dependenciesOf(config);
    this.platform = new PlatformClient(config);
    this.verdicts = this.check();
    this.server = createServer((request, response) => {
      this.answer(request, response).catch(() => response.destroy());
    });
  }

  /** Takes the service's port and starts checking the dependencies. */
  static async listen(config: AppConfig, log: Logger): Promise<Standby> {
    const standby = new Standby(config, log);
    standby.server.listen({ port: config.PORT, host: config.HOST });
    await once(standby.server, 'listening');
    return standby;
  }

  /** Resolves once PostgreSQL and Redis both answer. */
  async waitForDependencies(): Promise<void> {
    const reported = new Map<Dependency, number>();
    for (;;) {
      const verdicts = await this.verdicts;
      const now = Date.now();
      for (const [dependency, problem] of verdicts) {
        if (problem === null) {
          if (reported.delete(dependency)) {
            this.log.info(`${dependency.name} answers at ${dependency.address}`);
          }
          continue;
        }
        const last = reported.get(dependency);
        if (last === undefined || now - last >= REPORT_INTERVAL_MS) {
          this.log.warn(this.line(dependency, problem));
          reported.set(dependency, now);
        }
      }
      if ([...verdicts.values()].every((problem) => problem === null)) return;
      await sleep(CHECK_INTERVAL_MS);
      const next = this.check();
      // Answers keep the last round's verdicts until the next one is in.
      await next;
      this.verdicts = next;
    }
  }

  /**
   * Hands the port to the app: the listen options for `app.listen` that make
   * its server take this one's listening socket (Node's `server.listen(handle)`),
   * rather than closing it and binding again, which would refuse the connections
   * that arrive in between. Requests this server took finish here: each of its
   * answers closes its connection, so none stays with it afterwards.
   *
   * Only for a literal HOST: for a name (`localhost`) Fastify binds every
   * address the name resolves to (127.0.0.1 and ::1) and would give this one
   * socket to each of them, so this server closes and the app binds afresh
   * (connections in between are refused).
   */
  async handOver(): Promise<ListeningHandle | Record<string, never>> {
    this.platform.onApplicationShutdown();
    if (isIP(this.config.HOST) !== 0) {
      return { _handle: (this.server as unknown as ListeningHandle)._handle };
    }
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    await closed;
    return {};
  }

  /** Whether PostgreSQL or Redis did not answer the latest round of checks. */
  async anyMissing(): Promise<boolean> {
    return [...(await this.verdicts).values()].some((problem) => problem !== null);
  }

  /** After a boot that failed because a dependency stopped answering: check both again from now. */
  recheck(): void {
    this.verdicts = this.check();
  }

  private line(dependency: Dependency, problem: string): string {
    const line = `${dependency.name} is not reachable at ${dependency.address} (${problem}): waiting for it, the process starts once it answers`;
    return this.config.NODE_ENV === 'production' ? line : `${line}; ${DEVELOPMENT_HINT}`;
  }

  private async check(): Promise<Verdicts> {
    const problems = await Promise.all(this.dependencies.map((dependency) => dependency.check()));
    return new Map(this.dependencies.map((dependency, i) => [dependency, problems[i]]));
  }

  /** Whether the platform answers, from a check at most CHECK_CACHE_MS old (as HealthService). */
  private platformState(): Promise<DependencyState> {
    const now = Date.now();
    if (!this.platformCheck || now - this.platformCheck.at >= CHECK_CACHE_MS) {
      const state = this.platform.ping(AbortSignal.timeout(CHECK_TIMEOUT_MS)).then(
        (): DependencyState => 'healthy',
        (): DependencyState => 'unhealthy',
      );
      this.platformCheck = { at: now, state };
    }
    return this.platformCheck.state;
  }

  private async states(): Promise<DependenciesDto> {
    const [verdicts, platform] = await Promise.all([this.verdicts, this.platformState()]);
    const state = (key: Dependency['key']): DependencyState =>
      [...verdicts].some(([dependency, problem]) => dependency.key === key && problem !== null)
        ? 'unhealthy'
        : 'healthy';
    return { database: state('database'), cache: state('cache'), platform_api: platform };
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    await drained(request);
    response.setHeader(REQUEST_ID_HEADER, requestIdFor(request));
    response.setHeader('x-content-type-options', 'nosniff');
    // No keep-alive: once the app has the port, no connection may stay with this server.
    response.shouldKeepAlive = false;
    const send = (status: number, body: object, headers: Record<string, string> = {}): void => {
      response.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8' });
      response.end(JSON.stringify(body));
    };
    const path = (request.url ?? '/').split('?')[0];
    const read = request.method === 'GET' || request.method === 'HEAD';
    if (read && path === '/health/live') {
      send(200, { status: 'ok' } satisfies LivenessDto);
    } else if (read && path === '/health/ready') {
      // Not ready even when both answer: the app is booting.
      const report: ReadinessDto = { status: 'not_ready', ...(await this.states()) };
      send(this.config.READINESS_NOT_READY_STATUS, report);
    } else if (read && path === '/health') {
      const dependencies = await this.states();
      const degraded = Object.values(dependencies).some((state) => state !== 'healthy');
      send(200, {
        service: SERVICE_NAME,
        version: SERVICE_VERSION,
        status: degraded ? 'degraded' : 'healthy',
        dependencies,
      } satisfies HealthReportDto);
    } else {
      const verdicts = await this.verdicts;
      const missing = [...verdicts].filter(([, problem]) => problem !== null);
      const refusal = starting(missing.map(([dependency]) => dependency.name));
      send(refusal.status, errorBody(refusal), refusal.headers);
    }
  }
}
