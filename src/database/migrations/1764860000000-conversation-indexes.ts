import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The indexes a conversation is read by (ConversationPositions1764800000000):
 * in arrival order, and by the position followers read by (`stored_tx`).
 *
 * Built CONCURRENTLY, so a running service keeps storing and reading
 * messages while they build (a plain CREATE INDEX blocks every write to the
 * table for the whole build); that cannot run in a transaction, hence
 * `transaction = false` (the runner migrates with a transaction each). A
 * concurrent build that fails or is cut short (a killed migrator) leaves an
 * INVALID index behind, which IF NOT EXISTS would keep: it is dropped and
 * built again. The index the arrival one replaces goes last, once nothing
 * needs it.
 */
export class ConversationIndexes1764860000000 implements MigrationInterface {
  name = 'ConversationIndexes1764860000000';
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    // In UTC, so the expression is immutable (the truncation is the same in any zone).
    await buildIndex(
      queryRunner,
      'ix_messages_contact_arrival',
      `messages (contact_id, date_trunc('second', created_at AT TIME ZONE 'UTC'), received_at, seq)
       WHERE contact_id IS NOT NULL`,
    );
    await buildIndex(
      queryRunner,
      'ix_messages_contact_stored',
      `messages (contact_id, stored_tx, seq) WHERE contact_id IS NOT NULL`,
    );
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS ix_messages_contact`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await buildIndex(
      queryRunner,
      'ix_messages_contact',
      `messages (contact_id, seq) WHERE contact_id IS NOT NULL`,
    );
    const concurrently = queryRunner.isTransactionActive ? '' : 'CONCURRENTLY';
    await queryRunner.query(`DROP INDEX ${concurrently} IF EXISTS ix_messages_contact_stored`);
    await queryRunner.query(`DROP INDEX ${concurrently} IF EXISTS ix_messages_contact_arrival`);
  }
}

/**
 * Builds index `name` ON `definition` unless a valid one exists; concurrently
 * unless run in a transaction (a revert may be: then it locks the table).
 */
async function buildIndex(queryRunner: QueryRunner, name: string, definition: string) {
  const concurrently = queryRunner.isTransactionActive ? '' : 'CONCURRENTLY';
  const [left] = (await queryRunner.query(
    `SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass($1)`,
    [name],
  )) as Array<{ valid: boolean }>;
  if (left && !left.valid) await queryRunner.query(`DROP INDEX ${concurrently} IF EXISTS ${name}`);
  await queryRunner.query(`CREATE INDEX ${concurrently} IF NOT EXISTS ${name} ON ${definition}`);
}
