import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A recipient the platform would not take now (throttled, unavailable) waits
 * until `retry_at` while the rest of the list goes on; `attempts` counts the
 * tries that were its own fault, from `first_failed_at`.
 */
export class CampaignRetries1795697924305 implements MigrationInterface {
  name = 'CampaignRetries1795697924305';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE campaign_recipients
        ADD COLUMN attempts smallint NOT NULL DEFAULT 0,
        ADD COLUMN first_failed_at timestamptz,
        ADD COLUMN retry_at timestamptz`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE campaign_recipients DROP COLUMN attempts, DROP COLUMN first_failed_at, DROP COLUMN retry_at`,
    );
  }
}
