import { createHash, timingSafeEqual } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter as BullBoardFastifyAdapter } from '@bull-board/fastify';
import { JwtService } from '@nestjs/jwt';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Queue } from 'bullmq';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppException } from '../common/app.exception.js';
import { BUFFER_QUEUE, WEBHOOK_QUEUE } from '../common/queues.js';
import type { AppConfig } from '../config/app-config.js';
import { JWT_ALGORITHM } from '../auth/jwt.strategy.js';
import { LoginThrottleService } from './login-throttle.service.js';

export const QUEUE_DASHBOARD_PATH = '/admin/queues';

function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string): Buffer => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function unauthorized(reply: FastifyReply, message: string): FastifyReply {
  return reply
    .status(401)
    .header('www-authenticate', 'Basic realm="queues", charset="UTF-8"')
    .send({ statusCode: 401, error: 'Unauthorized', code: 'unauthorized', message });
}

/**
 * Bull Board for the service's queues at /admin/queues, for the admin only:
 * the admin username and password as HTTP Basic credentials (what a browser
 * prompts for), or the admin JWT. Failed Basic logins count toward the login
 * limit like POST /admin/auth/login.
 */
export async function serveQueueDashboard(
  app: NestFastifyApplication,
  config: AppConfig,
): Promise<void> {
  const jwt = app.get(JwtService, { strict: false });
  const throttle = app.get(LoginThrottleService, { strict: false });
  const queues = [WEBHOOK_QUEUE, BUFFER_QUEUE].map(
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
    const header = request.headers.authorization ?? '';
    const [scheme, value = ''] = header.split(' ');
    if (scheme?.toLowerCase() === 'bearer') {
      try {
        const payload = await jwt.verifyAsync<{ sub?: string }>(value, {
          algorithms: [JWT_ALGORITHM],
        });
        if (payload.sub === config.ADMIN_USERNAME) return;
      } catch {
        // falls through to 401
      }
      await unauthorized(reply, 'Missing, invalid or expired admin token');
      return;
    }
    if (scheme?.toLowerCase() !== 'basic') {
      await unauthorized(reply, 'Admin credentials required');
      return;
    }
    try {
      await throttle.assertAllowed(request.ip);
    } catch (error) {
      if (!(error instanceof AppException)) throw error;
      await reply
        .status(error.status)
        .headers(error.headers ?? {})
        .send({
          statusCode: error.status,
          error: 'Too Many Requests',
          code: error.code,
          message: error.message,
        });
      return;
    }
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const split = decoded.indexOf(':');
    const [username, password] = [decoded.slice(0, split), decoded.slice(split + 1)];
    const userOk = sameSecret(username, config.ADMIN_USERNAME);
    const passwordOk = sameSecret(password, config.ADMIN_PASSWORD);
    if (split < 0 || !userOk || !passwordOk) {
      await throttle.recordFailure(request.ip).catch(() => undefined);
      await unauthorized(reply, 'Wrong username or password');
    }
  };

  const fastify = app.getHttpAdapter().getInstance();
  await fastify.register(async (scope) => {
    scope.addHook('onRequest', authenticate);
    await scope.register(serverAdapter.registerPlugin(), { prefix: QUEUE_DASHBOARD_PATH });
  });
  fastify.addHook('onClose', async () => {
    await Promise.all(queues.map((queue) => queue.close()));
  });
}
