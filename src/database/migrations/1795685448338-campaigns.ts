import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Campaigns: a template sent to a list of recipients, paced by the workers,
 * each recipient's state kept so that none is sent to twice.
 */
export class Campaigns1795685448338 implements MigrationInterface {
  name = 'Campaigns1795685448338';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE campaigns (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL REFERENCES instances(id) ON DELETE CASCADE,
        name varchar(200) NOT NULL,
        template_id varchar(64) NOT NULL,
        template_name varchar(512) NOT NULL,
        template_language varchar(16) NOT NULL,
        template_category varchar(32),
        components jsonb NOT NULL DEFAULT '[]',
        state varchar(16) NOT NULL DEFAULT 'draft',
        pause_reason varchar(64),
        start_at timestamptz,
        rate_per_s real,
        recipients integer NOT NULL DEFAULT 0,
        duplicates integer NOT NULL DEFAULT 0,
        invalid integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        finished_at timestamptz,
        CONSTRAINT ck_campaigns_state CHECK
          (state IN ('draft', 'scheduled', 'running', 'paused', 'completed', 'cancelled'))
      )`);
    await queryRunner.query(
      `CREATE INDEX ix_campaigns_instance ON campaigns (instance_id, created_at DESC, id DESC)`,
    );
    await queryRunner.query(
      `CREATE INDEX ix_campaigns_due ON campaigns (state) WHERE state IN ('scheduled', 'running')`,
    );
    await queryRunner.query(`
      CREATE TABLE campaign_recipients (
        campaign_id uuid NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
        seq integer NOT NULL,
        to_number varchar(32),
        user_id varchar(128),
        parameters jsonb,
        state varchar(16) NOT NULL DEFAULT 'queued',
        reason varchar(64),
        error_code integer,
        error_message text,
        wamid varchar(256),
        worker varchar(64),
        lease_until timestamptz,
        sent_at timestamptz,
        PRIMARY KEY (campaign_id, seq),
        CONSTRAINT ck_campaign_recipients_state CHECK
          (state IN ('queued', 'claimed', 'sending', 'sent', 'failed', 'skipped')),
        CONSTRAINT ck_campaign_recipients_address CHECK
          ((to_number IS NULL) <> (user_id IS NULL))
      )`);
    await queryRunner.query(
      `CREATE INDEX ix_campaign_recipients_state ON campaign_recipients (campaign_id, state, seq)`,
    );
    await queryRunner.query(
      `CREATE INDEX ix_campaign_recipients_leased ON campaign_recipients (lease_until)
       WHERE state IN ('claimed', 'sending')`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE campaign_recipients`);
    await queryRunner.query(`DROP TABLE campaigns`);
  }
}
