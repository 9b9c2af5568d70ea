import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A recipient is in a campaign's list once (a CSV of a million rows is
 * de-duplicated by these indexes rather than in memory), and a sent
 * message's wamid finds its campaign (a reply is attributed to it).
 */
export class CampaignRecipientAddresses1795696949841 implements MigrationInterface {
  name = 'CampaignRecipientAddresses1795696949841';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE UNIQUE INDEX ux_campaign_recipients_number ON campaign_recipients (campaign_id, to_number)
       WHERE to_number IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX ux_campaign_recipients_user ON campaign_recipients (campaign_id, user_id)
       WHERE user_id IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX ix_campaign_recipients_wamid ON campaign_recipients (wamid)
       WHERE wamid IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX ix_campaign_recipients_wamid`);
    await queryRunner.query(`DROP INDEX ux_campaign_recipients_user`);
    await queryRunner.query(`DROP INDEX ux_campaign_recipients_number`);
  }
}
