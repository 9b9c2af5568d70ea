import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A template event re-sent by the platform is one event: unique on template, event and time. */
export class TemplateEventsOnce1764300000000 implements MigrationInterface {
  name = 'TemplateEventsOnce1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DELETE FROM template_events e USING template_events k
      WHERE e.template_id = k.template_id AND e.event = k.event AND e.event_at = k.event_at
        AND (e.created_at, e.id) > (k.created_at, k.id)`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX ux_template_events_once ON template_events (template_id, event, event_at)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX ux_template_events_once`);
  }
}
