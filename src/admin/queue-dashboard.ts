import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter as BullBoardFastifyAdapter } from '@bull-board/fastify';
import { JwtService } from '@nestjs/jwt';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Queue } from 'bullmq';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from '../common/all-exceptions.filter.js';
import { AppException } from '../common/app.exception.js';
import { REQUEST_ID_HEADER } from '../common/request-id.js';
import { QUEUE_NAMES } from '../queue/queues.js';
import type { AppConfig } from '../config/app-config.js';
import { JWT_ALGORITHM, isCurrentAdmin, type AdminJwtPayload } from '../auth/jwt.strategy.js';
import { AdminAuthService } from './admin-auth.service.js';

export const QUEUE_DASHBOARD_PATH = '/admin/queues';

/** The contract body, with a Basic challenge on 401 so a browser prompts for credentials. */
function refuse(reply: FastifyReply, error: AppException): FastifyReply {
  // Any credential failure is reported as 401 unauthorized, as on other protected routes.
  const shown = error.status === 401 ? new AppException('unauthorized', error.message) : error;
  if (shown.status === 401) {
    void reply.header('www-authenticate', 'Basic realm="queues", charset="UTF-8"');
  }
  return reply
    .status(shown.status)
    .headers(shown.headers ?? {})
    .send(errorBody(shown));
}

/**
 * What Bull Board's page would load from another host: a stylesheet link
 * (its fonts, from Google Fonts) or a script. Links the reader may follow
 * (the project's page, its releases) are anchors in the scripts, not loads.
 */
const EXTERNAL_RESOURCE =
  /<(?:link|script)\b[^>]*\b(?:href|src)=["']?(?:https?:)?\/\/[^>]*>(?:\s*<\/script>)?\s*/gi;

/**
 * The dashboard's page without anything it would fetch from another host, so
 * it works offline (and tells no third party it was opened); its text falls
 * back from IBM Plex to the browser's sans-serif and monospace fonts.
 */
export function withoutExternalResources(html: string): string {
  return html.replace(EXTERNAL_RESOURCE, '');
}

/** Methods that change nothing: a cross-site page may load them (it cannot read them). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A browser sends remembered Basic credentials with any request to this host,
 * including one a foreign page makes it send: a state-changing request (retry,
 * clean, pause) must come from the dashboard's own page, as its Origin (or
 * Referer) and Sec-Fetch-Site say.
 */
function assertSameOrigin(request: FastifyRequest): void {
  if (SAFE_METHODS.has(request.method)) return;
  const fetchSite = request.headers['sec-fetch-site'];
  const source = request.headers.origin ?? request.headers.referer;
  let sourceHost: string | undefined;
  try {
    sourceHost = source ? new URL(source).host : undefined;
  } catch {
    sourceHost = undefined;
  }
  const crossSite = fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none';
  if (crossSite || (source !== undefined && sourceHost !== request.headers.host)) {
    throw new AppException('forbidden', 'The queue dashboard only takes changes from its own page');
  }
}

/**
 * Bull Board for the service's queues at /admin/queues, for the admin only:
 * the admin username and password as HTTP Basic credentials (what a browser
 * prompts for, checked as POST /admin/auth/login checks them, under the same
 * failure limits; a browser with the known-device cookie is compared first and
 * only its failures counted), or the admin JWT.
 */
export async function serveQueueDashboard(
  app: NestFastifyApplication,
  config: AppConfig,
): Promise<void> {
  const jwt = app.get(JwtService, { strict: false });
  const auth = app.get(AdminAuthService, { strict: false });
  const queues = QUEUE_NAMES.map(
    (name) =>
      new Queue(name, { connection: { url: config.REDIS_URL }, prefix: config.REDIS_PREFIX }),
  );
  for (const queue of queues) queue.on('error', () => undefined);

  const serverAdapter = new BullBoardFastifyAdapter();
  serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({
    queues: queues.map((queue) => new BullMQAdapter(queue)),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'messaging-connector queues' } },
  });

  const authenticate = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const [scheme = '', value = ''] = (request.headers.authorization ?? '').split(' ');
    try {
      assertSameOrigin(request);
      if (scheme.toLowerCase() === 'bearer') {
        const payload = await jwt
          .verifyAsync<AdminJwtPayload>(value, { algorithms: [JWT_ALGORITHM] })
          .catch(() => ({}));
        if (!isCurrentAdmin(payload, config)) {
          throw new AppException('unauthorized', 'Missing, invalid or expired admin token');
        }
        return;
      }
      if (scheme.toLowerCase() !== 'basic') {
        throw new AppException('unauthorized', 'Admin credentials required');
      }
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const split = decoded.indexOf(':');
      const markKnown = await auth.verifyDashboardCredentials(
        split < 0 ? decoded : decoded.slice(0, split),
        split < 0 ? '' : decoded.slice(split + 1),
        request.ip,
        request.headers.cookie,
      );
      // The page's next requests then skip the username's pace and its limits' counting.
      if (markKnown) void reply.header('set-cookie', auth.knownDeviceCookie());
    } catch (error) {
      if (!(error instanceof AppException)) throw error;
      await refuse(reply, error);
    }
  };

  const fastify = app.getHttpAdapter().getInstance();
  await fastify.register(async (scope) => {
    // Set here, first: the app's own hook is added after this scope, and a refusal ends the request.
    scope.addHook('onRequest', async (request, reply) => {
      void reply.header(REQUEST_ID_HEADER, request.id);
    });
    scope.addHook('onRequest', authenticate);
    scope.addHook('onSend', async (_request, reply, payload) => {
      const type = reply.getHeader('content-type');
      return typeof payload === 'string' && typeof type === 'string' && type.startsWith('text/html')
        ? withoutExternalResources(payload)
        : payload;
    });
    await scope.register(serverAdapter.registerPlugin(), { prefix: QUEUE_DASHBOARD_PATH });
  });
  fastify.addHook('onClose', async () => {
    await Promise.all(queues.map((queue) => queue.close()));
  });
}
