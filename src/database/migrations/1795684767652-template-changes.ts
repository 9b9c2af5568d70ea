import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A template.status event tells which change it reports (status, quality, category) and
 * the new quality or category
 *
 * Written by `npm run sql:migration` from the current definitions (src/schema.ts):
 * - function mc_template_event_added(): changed
 */
export class TemplateChanges1795684767652 implements MigrationInterface {
  name = 'TemplateChanges1795684767652';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of UP) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const statement of DOWN) await queryRunner.query(statement);
  }
}

const UP = [
  'SET LOCAL check_function_bodies = off',
  "SET LOCAL lock_timeout = '5s'",
  "CREATE OR REPLACE FUNCTION mc_template_event_added() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n  INSERT INTO events (type, instance_id, lane, data)\n  SELECT 'template.status', i.id, 'template:' || NEW.template_id,\n    jsonb_build_object(\n      'template_id', NEW.template_id, 'name', NEW.template_name,\n      'language', NEW.template_language, 'change', NEW.change,\n      'status', CASE WHEN NEW.change = 'status' THEN NEW.event\n        ELSE COALESCE((SELECT t.status FROM templates t WHERE t.template_id = NEW.template_id),\n          NEW.event) END,\n      'reason', NEW.reason, 'quality', NEW.quality, 'category', NEW.category,\n      'previous_category', NEW.previous_category,\n      'channel_account_id', NEW.channel_account_id, 'at', mc_iso(NEW.event_at))\n  FROM instances i WHERE i.channel_account_id = NEW.channel_account_id AND i.is_active\n  ORDER BY i.id;\n  RETURN NULL;\nEND $$",
];

const DOWN = [
  'SET LOCAL check_function_bodies = off',
  "SET LOCAL lock_timeout = '5s'",
  "CREATE OR REPLACE FUNCTION mc_template_event_added()\n RETURNS trigger\n LANGUAGE plpgsql\nAS $function$\nBEGIN\n  INSERT INTO events (type, instance_id, lane, data)\n  SELECT 'template.status', i.id, 'template:' || NEW.template_id,\n    jsonb_build_object(\n      'template_id', NEW.template_id, 'name', NEW.template_name,\n      'language', NEW.template_language, 'status', NEW.event, 'reason', NEW.reason,\n      'channel_account_id', NEW.channel_account_id, 'at', mc_iso(NEW.event_at))\n  FROM instances i WHERE i.channel_account_id = NEW.channel_account_id AND i.is_active\n  ORDER BY i.id;\n  RETURN NULL;\nEND $function$\n",
];
