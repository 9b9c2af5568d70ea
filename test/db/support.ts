import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../src/database/migrations/index.js';
import { TestDatabase } from '../support/database.js';

/** A fresh database with every migration applied, without the app: the stores run on `source`. */
export interface MigratedDatabase {
  db: TestDatabase;
  source: DataSource;
  /** A client of its own (for transactions the test holds open); ended with the file. */
  client(): Promise<Client>;
}

/**
 * Registers beforeAll/afterAll hooks that migrate a fresh database once for
 * the file (as the service's runner does: a transaction each) and drop it at
 * the end; the fields are set once the hooks have run.
 */
export function useMigratedDatabase(): MigratedDatabase {
  const clients: Client[] = [];
  const context = {
    async client() {
      const client = new Client({ connectionString: context.db.url });
      await client.connect();
      clients.push(client);
      return client;
    },
  } as MigratedDatabase;
  beforeAll(async () => {
    context.db = await TestDatabase.create({ prefix: 'mc_db' });
    context.source = new DataSource({
      type: 'postgres',
      url: context.db.url,
      migrations: MIGRATIONS,
      extra: { max: 10 },
    });
    await context.source.initialize();
    await context.source.runMigrations({ transaction: 'each' });
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.end()));
    await context.source?.destroy();
    await context.db?.drop();
  });
  return context;
}

/** Inserts an instance (its tokens are not used here; each its own) and returns its id. */
export async function insertInstance(
  db: TestDatabase,
  fields: { channelAccountId?: string; phoneNumberId?: string } = {},
): Promise<string> {
  const id = randomUUID();
  await db.query(
    `INSERT INTO instances (id, name, phone_number_id, channel_account_id, access_token_encrypted,
       token_type, webhook_verify_token)
     VALUES ($1, 'Store', $2, $3, 'not-a-token', 'system_user', $4)`,
    [
      id,
      fields.phoneNumberId ?? String(Date.now()) + randomUUID().slice(0, 4),
      fields.channelAccountId ?? '102290129340398',
      `verify-${id}`,
    ],
  );
  return id;
}

/** Inserts a subscription of `instanceId` (null: every instance) that wants `types`. */
export async function insertSubscription(
  db: TestDatabase,
  instanceId: string | null,
  types: string[],
): Promise<string> {
  const id = randomUUID();
  await db.query(
    `INSERT INTO event_subscriptions (id, url, instance_id, event_types, enabled, secret_encrypted)
     VALUES ($1, 'http://127.0.0.1:9/events', $2, $3, true, 'not-a-secret')`,
    [id, instanceId, types],
  );
  return id;
}

/** What a contact made for a test is known by. */
export interface ContactFields {
  waId?: string;
  userId?: string;
  parentUserId?: string;
  name?: string;
}

/** Creates a contact through mc_resolve_contact (a number, a user id, or both); its id. */
export async function insertContact(
  db: TestDatabase,
  instanceId: string,
  fields: ContactFields = {},
): Promise<string> {
  const [row] = await db.query<{ id: string }>(
    'SELECT mc_resolve_contact($1, $2, $3, $4, NULL, $5, NULL) AS id',
    [
      instanceId,
      fields.waId ?? null,
      fields.userId ?? null,
      fields.parentUserId ?? null,
      fields.name ?? null,
    ],
  );
  return row.id;
}
