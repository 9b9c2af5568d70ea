import type { MigrationInterface, QueryRunner } from 'typeorm';
import { buildIndex, dropIndex } from '../concurrent-index.js';

/**
 * A recipient is in a campaign's list once (a CSV of a million rows is
 * de-duplicated by these indexes rather than in memory), and a sent
 * message's wamid finds its campaign (a reply is attributed to it). Built
 * CONCURRENTLY: workers keep sending campaigns meanwhile. The recipients'
 * reference to their campaign may wait for the commit: a list is written
 * before its campaign's row, whose creation event then has its counts.
 */
export class CampaignRecipientAddresses1795696949841 implements MigrationInterface {
  name = 'CampaignRecipientAddresses1795696949841';
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    await buildIndex(
      queryRunner,
      'ux_campaign_recipients_number',
      'campaign_recipients (campaign_id, to_number) WHERE to_number IS NOT NULL',
      { unique: true },
    );
    await buildIndex(
      queryRunner,
      'ux_campaign_recipients_user',
      'campaign_recipients (campaign_id, user_id) WHERE user_id IS NOT NULL',
      { unique: true },
    );
    await buildIndex(
      queryRunner,
      'ix_campaign_recipients_wamid',
      'campaign_recipients (wamid) WHERE wamid IS NOT NULL',
    );
    await queryRunner.query(
      `ALTER TABLE campaign_recipients
         ALTER CONSTRAINT campaign_recipients_campaign_id_fkey DEFERRABLE INITIALLY IMMEDIATE`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE campaign_recipients
         ALTER CONSTRAINT campaign_recipients_campaign_id_fkey NOT DEFERRABLE`,
    );
    await dropIndex(queryRunner, 'ix_campaign_recipients_wamid');
    await dropIndex(queryRunner, 'ux_campaign_recipients_user');
    await dropIndex(queryRunner, 'ux_campaign_recipients_number');
  }
}
