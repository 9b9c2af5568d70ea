import { Agent, request } from 'node:http';
import pg from 'pg';
import { Redis } from 'ioredis';

/**
 * The bare worker the service's pipeline is measured against: takes 200
 * deliveries at a time from a Redis list, stores their messages with one
 * multi-row INSERT … ON CONFLICT (wamid) DO NOTHING RETURNING, groups the new
 * ones by contact, and for each contact POSTs the agent once and the platform
 * once with the answer. Env: REDIS_URL, LIST, DATABASE_URL, AGENT_URL, PLATFORM_URL.
 */
const env = process.env as Record<string, string>;
const redis = new Redis(env.REDIS_URL);
const db = new pg.Pool({ connectionString: env.DATABASE_URL, max: 4 });
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

function post(url: string, body: unknown): Promise<string> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve(text));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

interface Message {
  from: string;
  id: string;
  timestamp: string;
  text?: { body?: string };
}

await db.query(`CREATE TABLE IF NOT EXISTS bare_messages (
  wamid text PRIMARY KEY, contact text NOT NULL, body jsonb NOT NULL, created_at timestamptz NOT NULL)`);
process.stdout.write('ready\n');

for (;;) {
  const items = (await redis.rpop(env.LIST, 200)) ?? [];
  if (items.length === 0) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    continue;
  }
  const messages: Message[] = [];
  for (const item of items) {
    const body = item.slice(item.indexOf('|') + 1);
    const envelope = JSON.parse(body) as {
      entry: Array<{ changes: Array<{ value: { messages?: Message[] } }> }>;
    };
    for (const entry of envelope.entry) {
      for (const change of entry.changes) messages.push(...(change.value.messages ?? []));
    }
  }
  const inserted = await db.query<{ wamid: string; contact: string }>(
    `INSERT INTO bare_messages (wamid, contact, body, created_at)
     SELECT m.wamid, m.contact, m.body, to_timestamp(m.ts)
     FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::float8[]) AS m(wamid, contact, body, ts)
     ON CONFLICT (wamid) DO NOTHING RETURNING wamid, contact`,
    [
      messages.map((m) => m.id),
      messages.map((m) => m.from),
      messages.map((m) => JSON.stringify(m)),
      messages.map((m) => Number(m.timestamp)),
    ],
  );
  const fresh = new Set(inserted.rows.map((row) => row.wamid));
  const byContact = new Map<string, Message[]>();
  for (const message of messages) {
    if (!fresh.has(message.id)) continue;
    byContact.set(message.from, [...(byContact.get(message.from) ?? []), message]);
  }
  await Promise.all(
    [...byContact].map(async ([contact, batch]) => {
      const answer = JSON.parse(
        await post(env.AGENT_URL, {
          contact: { wa_id: contact },
          messages: batch.map((m) => ({ id: m.id, text: m.text?.body ?? '' })),
          text: batch.map((m) => m.text?.body ?? '').join('\n'),
        }),
      ) as { reply?: string };
      await post(env.PLATFORM_URL, {
        messaging_product: 'messenger',
        to: contact,
        type: 'text',
        text: { body: answer.reply ?? '' },
      });
    }),
  );
}
