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

/** PostgreSQL's code for a unique-key violation. */
export const UNIQUE_VIOLATION = '23505';

/** The SQLSTATE of a failed statement, when the database gave one. */
export function sqlState(error: unknown): string | undefined {
  const driverError = (error as { driverError?: { code?: unknown } } | null)?.driverError;
  const code = driverError?.code ?? (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}
