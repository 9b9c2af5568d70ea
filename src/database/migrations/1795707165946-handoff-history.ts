import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each contact's handoffs, one row per pause (keyed by its start): who
 * paused it, why, until when, and when and by whom it ended. The agent reads
 * the latest of them (contact_state.handoffs); the pauses running now are
 * copied in.
 */
export class HandoffHistory1795707165946 implements MigrationInterface {
  name = 'HandoffHistory1795707165946';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE contact_handoffs (
        contact_id uuid NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
        since timestamptz NOT NULL,
        until timestamptz,
        by varchar(8),
        reason varchar(500),
        account_name varchar(200),
        ended_at timestamptz,
        ended_by varchar(8),
        PRIMARY KEY (contact_id, since)
      )`);
    await queryRunner.query(`
      INSERT INTO contact_handoffs (contact_id, since, until, by, reason, account_name)
      SELECT id, handoff_since, handoff_until, handoff_by, handoff_reason, handoff_account_name
      FROM contacts WHERE handoff_since IS NOT NULL AND handoff_until IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE contact_handoffs');
  }
}
