import { Agent, request } from 'node:http';
import { Redis } from 'ioredis';
import pg from 'pg';

/**
 * The bare campaign sender a campaign worker is measured against, doing what
 * exactly-once sending asks and no more: recipients in a table, taken a
 * hundred at a time (UPDATE … SKIP LOCKED), sixteen in flight; for each one a
 * Redis pacing step (one EVALSHA), the recipient marked `sending` (one
 * UPDATE), the platform POST, then marked `sent` with its wamid (one UPDATE)
 * and the message stored (one INSERT). Env: DATABASE_URL, REDIS_URL,
 * PLATFORM_URL, COUNT (recipients). Prints the sends per second and exits.
 */
const env = process.env as Record<string, string>;
const count = Number(env.COUNT);
const redis = new Redis(env.REDIS_URL);
const db = new pg.Pool({ connectionString: env.DATABASE_URL, max: 20 });
const httpAgent = new Agent({ keepAlive: true, maxSockets: 64 });
redis.defineCommand('pace', {
  numberOfKeys: 1,
  lua: `local t = redis.call('TIME') local now = t[1] * 1000000 + t[2]
local tat = tonumber(redis.call('GET', KEYS[1]) or '0') if tat < now then tat = now end
redis.call('SET', KEYS[1], string.format('%d', tat + 1), 'PX', 60000) return tat - now`,
});
const pace = () => (redis as Redis & { pace(key: string): Promise<number> }).pace('bare:campaign');

await db.query(`DROP TABLE IF EXISTS bare_recipients, bare_campaign_sent`);
await db.query(`CREATE TABLE bare_recipients (seq int PRIMARY KEY, to_number text NOT NULL,
  state text NOT NULL DEFAULT 'queued', wamid text)`);
await db.query(`CREATE INDEX ON bare_recipients (state, seq)`);
await db.query(`CREATE TABLE bare_campaign_sent (wamid text PRIMARY KEY, contact text NOT NULL,
  body jsonb NOT NULL, created_at timestamptz DEFAULT now())`);
await db.query(
  `INSERT INTO bare_recipients (seq, to_number)
   SELECT g, '55119' || lpad(g::text, 8, '0') FROM generate_series(1, $1) g`,
  [count],
);

function platformSend(body: unknown): Promise<string> {
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
        res.on('end', () =>
          resolve((JSON.parse(text) as { messages: Array<{ id: string }> }).messages[0].id),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const started = Date.now();
for (;;) {
  const { rows } = await db.query<{ seq: number; to_number: string }>(
    `WITH q AS MATERIALIZED (SELECT seq FROM bare_recipients WHERE state = 'queued'
       ORDER BY seq LIMIT 100 FOR UPDATE SKIP LOCKED)
     UPDATE bare_recipients r SET state = 'claimed' FROM q WHERE r.seq = q.seq
     RETURNING r.seq, r.to_number`,
  );
  if (rows.length === 0) break;
  const lane = async () => {
    for (let next = rows.shift(); next; next = rows.shift()) {
      await pace();
      await db.query(`UPDATE bare_recipients SET state = 'sending' WHERE seq = $1`, [next.seq]);
      const body = {
        messaging_product: 'messenger',
        recipient_type: 'individual',
        to: next.to_number,
        type: 'template',
        template: { name: 'autumn_sale', language: { code: 'pt_BR' } },
      };
      const wamid = await platformSend(body);
      await db.query(`UPDATE bare_recipients SET state = 'sent', wamid = $2 WHERE seq = $1`, [
        next.seq,
        wamid,
      ]);
      await db.query(`INSERT INTO bare_campaign_sent (wamid, contact, body) VALUES ($1, $2, $3)`, [
        wamid,
        next.to_number,
        JSON.stringify(body),
      ]);
    }
  };
  await Promise.all(Array.from({ length: 16 }, lane));
}
const seconds = (Date.now() - started) / 1000;
process.stdout.write(`${Math.round(count / seconds)}\n`);
await db.query(`DROP TABLE IF EXISTS bare_recipients, bare_campaign_sent`);
await db.end();
redis.disconnect();
