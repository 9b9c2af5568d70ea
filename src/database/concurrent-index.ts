import type { QueryRunner } from 'typeorm';

/**
 * Builds index `name` ON `definition` unless a valid one exists: CONCURRENTLY
 * (a running service keeps writing the table meanwhile) unless run in a
 * transaction (a revert may be: then it locks the table). A concurrent build
 * cut short leaves an INVALID index behind, which IF NOT EXISTS would keep:
 * it is dropped and built again. The migration needs `transaction = false`.
 */
export async function buildIndex(
  queryRunner: QueryRunner,
  name: string,
  definition: string,
  options: { unique?: boolean } = {},
): Promise<void> {
  const concurrently = queryRunner.isTransactionActive ? '' : 'CONCURRENTLY';
  const [left] = (await queryRunner.query(
    `SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass($1)`,
    [name],
  )) as Array<{ valid: boolean }>;
  if (left && !left.valid) await queryRunner.query(`DROP INDEX ${concurrently} IF EXISTS ${name}`);
  const unique = options.unique ? 'UNIQUE ' : '';
  await queryRunner.query(
    `CREATE ${unique}INDEX ${concurrently} IF NOT EXISTS ${name} ON ${definition}`,
  );
}

/** Drops index `name`, concurrently unless run in a transaction. */
export async function dropIndex(queryRunner: QueryRunner, name: string): Promise<void> {
  const concurrently = queryRunner.isTransactionActive ? '' : 'CONCURRENTLY';
  await queryRunner.query(`DROP INDEX ${concurrently} IF EXISTS ${name}`);
}
