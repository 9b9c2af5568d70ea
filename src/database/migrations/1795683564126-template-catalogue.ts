import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The template catalogue: each template's category, components, parameter
 * format, quality and a category change the platform announced, kept from the
 * platform's list (`synced_at`) and its webhooks (`heard_at`); template events
 * say which change they are.
 */
export class TemplateCatalogue1795683564126 implements MigrationInterface {
  name = 'TemplateCatalogue1795683564126';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE templates
        ADD COLUMN category varchar(32),
        ADD COLUMN components jsonb,
        ADD COLUMN parameter_format varchar(16),
        ADD COLUMN quality varchar(16),
        ADD COLUMN previous_category varchar(32),
        ADD COLUMN pending_category varchar(32),
        ADD COLUMN synced_at timestamptz,
        ADD COLUMN heard_at timestamptz`);
    await queryRunner.query(
      `CREATE INDEX ix_templates_account_name ON templates (channel_account_id, template_name, template_language)`,
    );
    await queryRunner.query(`
      ALTER TABLE template_events
        ADD COLUMN change varchar(16) NOT NULL DEFAULT 'status',
        ADD COLUMN quality varchar(16),
        ADD COLUMN category varchar(32),
        ADD COLUMN previous_category varchar(32)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE template_events DROP COLUMN change, DROP COLUMN quality,
        DROP COLUMN category, DROP COLUMN previous_category`);
    await queryRunner.query(`DROP INDEX ix_templates_account_name`);
    await queryRunner.query(`
      ALTER TABLE templates DROP COLUMN category, DROP COLUMN components,
        DROP COLUMN parameter_format, DROP COLUMN quality, DROP COLUMN previous_category,
        DROP COLUMN pending_category, DROP COLUMN synced_at, DROP COLUMN heard_at`);
  }
}
