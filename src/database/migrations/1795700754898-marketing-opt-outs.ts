import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A customer who stopped marketing messages in the app (the platform's
 * user_preferences webhook, or a send refused with 131050): since when, and
 * the time of the last preference applied (a re-delivered older one changes
 * nothing).
 */
export class MarketingOptOuts1795700754898 implements MigrationInterface {
  name = 'MarketingOptOuts1795700754898';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE contacts
        ADD COLUMN marketing_opted_out_at timestamptz,
        ADD COLUMN marketing_pref_at timestamptz`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE contacts DROP COLUMN marketing_opted_out_at, DROP COLUMN marketing_pref_at`,
    );
  }
}
