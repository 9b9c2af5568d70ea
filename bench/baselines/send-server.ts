import { createHash } from 'node:crypto';
import { Agent, request } from 'node:http';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import pg from 'pg';

/**
 * The bare sender /send/text is measured against, doing what the contract
 * asks of a send and no more: Fastify; a bearer key checked by its hash and
 * counted against its rate limit (one Redis call); the body checked; the
 * 24-hour window read from the contact (one SELECT); a Redis pacing step
 * (GCRA, one EVALSHA); the platform POST; one INSERT of the sent message;
 * the wamid back. Env: PORT, KEY, REDIS_URL, DATABASE_URL, PLATFORM_URL.
 */
const env = process.env as Record<string, string>;
const redis = new Redis(env.REDIS_URL);
const db = new pg.Pool({ connectionString: env.DATABASE_URL, max: 20 });
const httpAgent = new Agent({ keepAlive: true, maxSockets: 256 });
const keyHash = createHash('sha256').update(env.KEY).digest('hex');
redis.defineCommand('pace', {
  numberOfKeys: 1,
  lua: `local t = redis.call('TIME') local now = t[1] * 1000000 + t[2]
local tat = tonumber(redis.call('GET', KEYS[1]) or '0') if tat < now then tat = now end
redis.call('SET', KEYS[1], string.format('%d', tat + 1), 'PX', 60000) return tat - now`,
});
redis.defineCommand('limit', {
  numberOfKeys: 1,
  lua: `local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('PEXPIRE', KEYS[1], 1000) end return n`,
});
type Commands = Redis & { pace(key: string): Promise<number>; limit(key: string): Promise<number> };
const pace = (key: string) => (redis as Commands).pace(key);
const withinLimit = async (key: string) => (await (redis as Commands).limit(key)) <= 1_000_000;
const DAY_MS = 24 * 60 * 60 * 1000;

await db.query(`CREATE TABLE IF NOT EXISTS bare_sent (
  wamid text PRIMARY KEY, contact text NOT NULL, body jsonb NOT NULL, created_at timestamptz DEFAULT now())`);

function platformSend(body: unknown): Promise<{ messages: Array<{ id: string }> }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(
      `${env.PLATFORM_URL}/v25.0/400000000001/messages`,
      {
        method: 'POST',
        agent: httpAgent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve(JSON.parse(text) as { messages: Array<{ id: string }> }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const app = Fastify();
app.post('/send/text', async (req, reply) => {
  const auth = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
  const hash = createHash('sha256').update(auth).digest('hex');
  if (hash !== keyHash) return reply.status(401).send({ code: 'unauthorized' });
  if (!(await withinLimit(`bare:limit:${hash}`))) {
    return reply.status(429).send({ code: 'rate_limited' });
  }
  const body = req.body as { to?: unknown; body?: unknown };
  if (typeof body.to !== 'string' || !/^\d{8,15}$/.test(body.to) || typeof body.body !== 'string') {
    return reply.status(400).send({ code: 'validation_failed' });
  }
  const { rows } = await db.query<{ last: Date | null }>(
    'SELECT max(last_inbound_at) AS last FROM contacts WHERE wa_id = $1',
    [body.to],
  );
  if (!rows[0]?.last || Date.now() - rows[0].last.getTime() > DAY_MS) {
    return reply.status(422).send({ code: 'service_window_closed' });
  }
  await pace('bare:pace');
  const sent = await platformSend({
    messaging_product: 'messenger',
    recipient_type: 'individual',
    to: body.to,
    type: 'text',
    text: { body: body.body },
  });
  const wamid = sent.messages[0].id;
  await db.query('INSERT INTO bare_sent (wamid, contact, body) VALUES ($1, $2, $3)', [
    wamid,
    body.to,
    JSON.stringify(body),
  ]);
  return { success: true, wamid };
});
await app.listen({ port: Number(env.PORT), host: '127.0.0.1' });
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
