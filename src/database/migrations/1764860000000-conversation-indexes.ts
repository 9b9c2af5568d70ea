import type { MigrationInterface, QueryRunner } from 'typeorm';
import { buildIndex, dropIndex } from '../concurrent-index.js';

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
    await dropIndex(queryRunner, 'ix_messages_contact');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await buildIndex(
      queryRunner,
      'ix_messages_contact',
      `messages (contact_id, seq) WHERE contact_id IS NOT NULL`,
    );
    await dropIndex(queryRunner, 'ix_messages_contact_stored');
    await dropIndex(queryRunner, 'ix_messages_contact_arrival');
  }
}
