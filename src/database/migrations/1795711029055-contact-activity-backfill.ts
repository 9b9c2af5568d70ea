import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Contacts stored before mc_contact_activity are dated as it dates them: one
 * with imported history only by its latest imported message, one with no
 * message at all (the phone book's, a preference's) by the epoch, so it
 * lists last. Only contacts with neither an inbound nor an outbound time are
 * read (their messages through the contact's index); the others keep theirs.
 */
export class ContactActivityBackfill1795711029055 implements MigrationInterface {
  name = 'ContactActivityBackfill1795711029055';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`SET LOCAL lock_timeout = '5s'`);
    // The trigger computes last_activity_at as the column changes.
    await queryRunner.query(`
      UPDATE contacts c SET last_imported_at = h.at
      FROM (SELECT c2.id, (SELECT max(m.created_at) FROM messages m
                           WHERE m.contact_id = c2.id AND m.imported) AS at
            FROM contacts c2
            WHERE c2.last_inbound_at IS NULL AND c2.last_outbound_at IS NULL
              AND c2.last_imported_at IS NULL) h
      WHERE c.id = h.id AND h.at IS NOT NULL`);
    await queryRunner.query(`
      UPDATE contacts SET last_activity_at = 'epoch'
      WHERE last_inbound_at IS NULL AND last_outbound_at IS NULL AND last_imported_at IS NULL
        AND last_activity_at <> 'epoch'`);
  }

  async down(): Promise<void> {
    // The dates it wrote are what the trigger writes: nothing to undo.
  }
}
