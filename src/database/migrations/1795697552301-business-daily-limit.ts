import type { MigrationInterface, QueryRunner } from 'typeorm';
import { buildIndex, dropIndex } from '../concurrent-index.js';

/**
 * The business's daily limit on customers it may start conversations with
 * (the platform's business_capability_update; null: none known), and the
 * index that counts a campaign's sends of the last 24 hours against it
 * (built CONCURRENTLY: workers keep sending meanwhile).
 */
export class BusinessDailyLimit1795697552301 implements MigrationInterface {
  name = 'BusinessDailyLimit1795697552301';
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE instances ADD COLUMN daily_limit integer`);
    await buildIndex(
      queryRunner,
      'ix_campaign_recipients_sent',
      'campaign_recipients (campaign_id, sent_at) WHERE sent_at IS NOT NULL',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await dropIndex(queryRunner, 'ix_campaign_recipients_sent');
    await queryRunner.query(`ALTER TABLE instances DROP COLUMN daily_limit`);
  }
}
