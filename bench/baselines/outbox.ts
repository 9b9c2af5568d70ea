import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { signedPoster } from './signed-post.js';

/**
 * The bare durable outbox the service's event forwarding is measured
 * against, on the same PostgreSQL: phases of RATE messages a second, each
 * stored by one INSERT; in a phase `with` events, the same statement also
 * INSERTs its event into an outbox table (the message's transaction), and
 * once the event is POSTed (signed, keep-alive) one UPDATE marks it
 * delivered. Unbatched, no lanes, no retries: what durability alone costs the
 * database per event. Its statements are prepared once per connection, as the
 * service's hot ones are. Prints `ready`, then runs one phase per line read
 * (`with <seconds>` or `without <seconds>`) and answers each with
 * `done <messages> cpu <ms>` (this process's CPU). Its connections stay open
 * between phases, so the measurer sees their backends at both ends.
 * Env: DATABASE_URL, URL, RATE, SECRET.
 */
const env = process.env as Record<string, string>;
const rate = Number(env.RATE);
const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 10, idleTimeoutMillis: 0 });
const poster = signedPoster(env.URL, env.SECRET);

await pool.query(`
  CREATE TABLE IF NOT EXISTS bare_messages (
    id bigserial PRIMARY KEY, wamid text NOT NULL UNIQUE, contact text NOT NULL,
    body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
  CREATE TABLE IF NOT EXISTS bare_outbox (
    id bigserial PRIMARY KEY, event_id uuid NOT NULL, message_id bigint NOT NULL,
    body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now(),
    attempts int NOT NULL DEFAULT 0, delivered_at timestamptz);
  CREATE INDEX IF NOT EXISTS bare_outbox_pending ON bare_outbox (id) WHERE delivered_at IS NULL;`);

const run = randomUUID().slice(0, 8);
async function message(n: number, withEvents: boolean): Promise<void> {
  const wamid = `wamid.bare${run}-${n}`;
  const contact = `55119${String(n % 500).padStart(8, '0')}`;
  const content = JSON.stringify({ type: 'text', text: { body: `message ${n}` } });
  if (!withEvents) {
    await pool.query({
      name: 'bare_message',
      text: 'INSERT INTO bare_messages (wamid, contact, body) VALUES ($1, $2, $3)',
      values: [wamid, contact, content],
    });
    return;
  }
  const eventId = randomUUID();
  const {
    rows: [row],
  } = await pool.query<{ id: string; body: string }>({
    name: 'bare_message_event',
    text: `WITH m AS (
       INSERT INTO bare_messages (wamid, contact, body) VALUES ($1, $2, $3) RETURNING id, created_at)
     INSERT INTO bare_outbox (event_id, message_id, body)
     SELECT $4, m.id, jsonb_build_object('id', $4::uuid, 'type', 'message.received',
       'created_at', m.created_at, 'data', jsonb_build_object('contact', $2::text, 'message', $3::jsonb))
     FROM m RETURNING id, body::text`,
    values: [wamid, contact, content, eventId],
  });
  await poster.post(eventId, row.body);
  await pool.query({
    name: 'bare_delivered',
    text: 'UPDATE bare_outbox SET delivered_at = now(), attempts = attempts + 1 WHERE id = $1',
    values: [row.id],
  });
}

let sequence = 0;

/** One phase: `seconds` of RATE messages a second, with or without their events. */
async function phase(withEvents: boolean, seconds: number): Promise<string> {
  const total = Math.round(rate * seconds);
  const cpu = process.cpuUsage();
  const begin = Date.now();
  let started = 0;
  const inFlight: Array<Promise<void>> = [];
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const due = Math.min(total, Math.floor(((Date.now() - begin) / 1000) * rate));
      while (started < due) inFlight.push(message(++started + sequence, withEvents));
      if (started >= total) {
        clearInterval(tick);
        resolve();
      }
    }, 10);
  });
  await Promise.all(inFlight);
  sequence += total;
  const used = process.cpuUsage(cpu);
  return `done ${total} cpu ${(used.user + used.system) / 1000}\n`;
}

process.stdout.write('ready\n');
for await (const line of createInterface({ input: process.stdin })) {
  const [mode, seconds] = line.trim().split(' ');
  if (!mode) continue;
  process.stdout.write(await phase(mode === 'with', Number(seconds)));
}
poster.close();
await pool.end();
