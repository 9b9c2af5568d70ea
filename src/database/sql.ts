import type { DataSource, EntityManager } from 'typeorm';

/** Something that runs SQL: the data source, or a transaction's manager. */
export type Queryable = Pick<DataSource | EntityManager, 'query'>;

/**
 * The rows a statement returns. TypeORM answers `[rows, count]` for UPDATE
 * and DELETE (with RETURNING) and plain rows for the others; this evens it out.
 */
export async function rows<T>(db: Queryable, sql: string, params: unknown[] = []): Promise<T[]> {
  const result = (await db.query(sql, params)) as unknown;
  if (
    Array.isArray(result) &&
    result.length === 2 &&
    Array.isArray(result[0]) &&
    typeof result[1] === 'number'
  ) {
    return result[0] as T[];
  }
  return result as T[];
}

/** The part of node-postgres' pool a prepared statement needs. */
interface PgPool {
  query<T>(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: T[] }>;
}

/**
 * The rows of a hot statement, run as a named prepared statement: each pool
 * connection has PostgreSQL plan it once, not on every call (the planning
 * of the turn and inbound statements costs as much as running them). `name`
 * must be unique to `sql`.
 */
export async function prepared<T>(
  db: DataSource,
  name: string,
  sql: string,
  params: unknown[],
): Promise<T[]> {
  const pool = (db.driver as unknown as { master?: PgPool }).master;
  if (!pool) return rows<T>(db, sql, params);
  return (await pool.query<T>({ name, text: sql, values: params })).rows;
}

/** PostgreSQL's code for a foreign-key violation. */
export const FOREIGN_KEY_VIOLATION = '23503';

/** PostgreSQL's code for a unique-key violation. */
export const UNIQUE_VIOLATION = '23505';

/** The SQLSTATE of a failed statement, when the database gave one. */
export function sqlState(error: unknown): string | undefined {
  const driverError = (error as { driverError?: { code?: unknown } } | null)?.driverError;
  const code = driverError?.code ?? (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** PostgreSQL's code for a statement cancelled, here by its statement_timeout. */
export const QUERY_CANCELED = '57014';

/** Runs one statement of a timed transaction. */
export type TimedQuery = <T>(sql: string, params?: unknown[]) => Promise<T[]>;

/** The part of node-postgres' pool a timed transaction needs. */
interface PgClientPool {
  connect(): Promise<{
    query<T>(config: {
      text: string;
      values?: unknown[];
      query_timeout?: number;
    }): Promise<{ rows: T[] }>;
    release(error?: Error | boolean): void;
  }>;
}

/** How much longer than the statement timeout the client waits for PostgreSQL's own answer. */
const CLIENT_GRACE_MS = 5000;

/**
 * Runs `work` in a transaction whose statements PostgreSQL cancels after
 * `timeoutMs` (statement_timeout, error QUERY_CANCELED, everything rolled
 * back). The pool's query timeout is the client's only: a statement it gave
 * up on runs on and commits, so here the client waits a little longer than
 * the server's limit, on a connection of its own.
 */
export async function timedTransaction<T>(
  db: DataSource,
  timeoutMs: number,
  work: (query: TimedQuery) => Promise<T>,
): Promise<T> {
  const pool = (db.driver as unknown as { master?: PgClientPool }).master;
  if (!pool) throw new Error('timedTransaction needs the PostgreSQL driver');
  const client = await pool.connect();
  const query: TimedQuery = async <R>(sql: string, params: unknown[] = []) =>
    (
      await client.query<R>({
        text: sql,
        values: params,
        query_timeout: timeoutMs + CLIENT_GRACE_MS,
      })
    ).rows;
  let broken: Error | undefined;
  try {
    await query('BEGIN');
    await query(`SELECT set_config('statement_timeout', $1, true)`, [String(timeoutMs)]);
    const result = await work(query);
    await query('COMMIT');
    return result;
  } catch (error) {
    // A connection that cannot roll back is dropped, not given back to the pool.
    await query('ROLLBACK').catch((rollback: Error) => (broken = rollback));
    throw error;
  } finally {
    client.release(broken);
  }
}

/**
 * SQL for a timestamptz column as microseconds since the epoch (digits):
 * exact (extract gives numeric), whatever the session's DateStyle and TimeZone.
 */
export const epochMicros = (column: string): string =>
  `(extract(epoch FROM ${column}) * 1000000)::int8::text`;
