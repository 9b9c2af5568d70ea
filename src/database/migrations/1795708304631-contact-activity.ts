import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A contact's last activity becomes a column its trigger keeps
 * (mc_contact_activity): its last message either way, or its imported
 * history's latest (the new `last_imported_at`); a contact with none (named
 * only by the phone book, or a preference) lists last, no more first by its
 * creation. DROP EXPRESSION keeps the values and the index, without a rewrite.
 */
export class ContactActivity1795708304631 implements MigrationInterface {
  name = 'ContactActivity1795708304631';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Catalog changes only, but they lock the table: wait behind a long transaction at most this long.
    await queryRunner.query(`SET LOCAL lock_timeout = '5s'`);
    await queryRunner.query('ALTER TABLE contacts ADD COLUMN last_imported_at timestamptz');
    await queryRunner.query('ALTER TABLE contacts ALTER COLUMN last_activity_at DROP EXPRESSION');
    // Until the trigger exists (the next migration), a new contact is dated as before.
    await queryRunner.query('ALTER TABLE contacts ALTER COLUMN last_activity_at SET DEFAULT now()');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX ix_contacts_activity');
    await queryRunner.query('ALTER TABLE contacts DROP COLUMN last_activity_at');
    await queryRunner.query(`
      ALTER TABLE contacts ADD COLUMN last_activity_at timestamptz
        GENERATED ALWAYS AS (COALESCE(GREATEST(last_inbound_at, last_outbound_at), created_at)) STORED`);
    await queryRunner.query(
      'CREATE INDEX ix_contacts_activity ON contacts (instance_id, last_activity_at DESC, id DESC)',
    );
    await queryRunner.query('ALTER TABLE contacts DROP COLUMN last_imported_at');
  }
}
