import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

const ADMIN_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** A database of its own for one test file (or one demo run), dropped at the end. */
export class TestDatabase {
  private constructor(
    readonly name: string,
    readonly url: string,
    private readonly adminUrl: string,
  ) {}

  /**
   * Creates a database named `prefix` (default mc_test) and a random suffix,
   * so that runs side by side never share one, through the server of `adminUrl`.
   */
  static async create(options: { prefix?: string; adminUrl?: string } = {}): Promise<TestDatabase> {
    const adminUrl = options.adminUrl ?? ADMIN_DATABASE_URL;
    const name = `${options.prefix ?? 'mc_test'}_${randomBytes(6).toString('hex')}`;
    await withClient(adminUrl, (client) => client.query(`CREATE DATABASE ${name}`));
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
