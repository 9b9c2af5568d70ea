import type { MigrationInterface, QueryRunner } from 'typeorm';

export class TemplateEvents1763913600000 implements MigrationInterface {
  name = 'TemplateEvents1763913600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE template_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        channel_account_id varchar(64) NOT NULL,
        template_id varchar(64) NOT NULL,
        template_name varchar(512),
        template_language varchar(16),
        event varchar(32) NOT NULL,
        reason text,
        event_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX ix_template_events_template ON template_events (template_id, event_at)`,
    );
    await queryRunner.query(`
      CREATE TABLE templates (
        template_id varchar(64) PRIMARY KEY,
        channel_account_id varchar(64) NOT NULL,
        template_name varchar(512),
        template_language varchar(16),
        status varchar(32) NOT NULL,
        reason text,
        status_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE templates`);
    await queryRunner.query(`DROP TABLE template_events`);
  }
}
