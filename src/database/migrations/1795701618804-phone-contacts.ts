import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A contact's name in the owner's phone address book (coexistence's
 * smb_app_state_sync): kept apart, and shown as the contact's name only
 * while the customer's own profile has given none.
 */
export class PhoneContacts1795701618804 implements MigrationInterface {
  name = 'PhoneContacts1795701618804';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE contacts ADD COLUMN phone_name varchar(256)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE contacts DROP COLUMN phone_name');
  }
}
