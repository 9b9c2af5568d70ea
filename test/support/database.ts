import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

const ADMIN_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** A database of its own for one test file, dropped at the end (the demo keeps its own). */
export class TestDatabase {
  private constructor(
    readonly name: string,
    readonly url: string,
    private readonly adminUrl: string,
  ) {}

  /**
   * Creates a database with a random name, or with `name` (dropped first if
   * an earlier run left it), through the server of `adminUrl`.
   */
  static async create(options: { name?: string; adminUrl?: string } = {}): Promise<TestDatabase> {
    const adminUrl = options.adminUrl ?? ADMIN_DATABASE_URL;
    const name = options.name ?? `mc_test_${randomBytes(6).toString('hex')}`;
    await withClient(adminUrl, async (client) => {
      if (options.name) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.query(`CREATE DATABASE ${name}`);
    });
    return new TestDatabase(name, adminUrl.replace(/\/[^/]*$/, `/${name}`), adminUrl);
  }

  async query<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    return withClient(this.url, async (client) => (await client.query(sql, params)).rows as T[]);
  }

  async drop(): Promise<void> {
    await withClient(this.adminUrl, (client) =>
      client.query(`DROP DATABASE IF EXISTS ${this.name} WITH (FORCE)`),
    );
  }
}

async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
