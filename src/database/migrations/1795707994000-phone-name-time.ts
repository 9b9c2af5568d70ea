import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When the phone book last named a contact (its entry's own time), so that
 * an older entry delivered again after a newer one changes nothing.
 */
export class PhoneNameTime1795707994000 implements MigrationInterface {
  name = 'PhoneNameTime1795707994000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE contacts ADD COLUMN phone_name_at timestamptz');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE contacts DROP COLUMN phone_name_at');
  }
}
