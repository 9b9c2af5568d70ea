import { createHmac, timingSafeEqual } from 'node:crypto';
import Fastify from 'fastify';
import { Redis } from 'ioredis';

/**
 * The bare acknowledger the service's webhook is measured against: Fastify,
 * HMAC over the raw body, JSON.parse, one Redis LPUSH, 200. No logging,
 * no framework beyond Fastify. Env: PORT, SECRET, REDIS_URL, LIST.
 */
const { PORT, SECRET, REDIS_URL, LIST } = process.env as Record<string, string>;
const redis = new Redis(REDIS_URL);
const app = Fastify({ bodyLimit: 5 * 1024 * 1024 });
app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) =>
  done(null, body),
);
app.post('/webhooks/messenger', async (request, reply) => {
  const raw = request.body as Buffer;
  const header = String(request.headers['x-hub-signature-256'] ?? '');
  const expected = createHmac('sha256', SECRET).update(raw).digest();
  const given = Buffer.from(header.slice('sha256='.length), 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return reply.status(401).send({ status: 'invalid signature' });
  }
  JSON.parse(raw.toString('utf8'));
  await redis.lpush(LIST, `${Date.now()}|${raw.toString('utf8')}`);
  return { status: 'ok' };
});
await app.listen({ port: Number(PORT), host: '127.0.0.1' });
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void app.close().then(() => redis.quit().then(() => process.exit(0)));
});
