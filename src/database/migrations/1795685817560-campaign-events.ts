import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A campaign's state changes are campaign.status events
 *
 * Written by `npm run sql:migration` from the current definitions (src/schema.ts):
 * - function mc_campaign_status(): added
 * - trigger tr_campaign_status on campaigns: added
 */
export class CampaignEvents1795685817560 implements MigrationInterface {
  name = 'CampaignEvents1795685817560';

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
  'DROP TRIGGER IF EXISTS tr_campaign_status ON campaigns',
  "CREATE OR REPLACE FUNCTION mc_campaign_status() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n  IF TG_OP = 'UPDATE' AND NEW.state = OLD.state\n     AND NEW.pause_reason IS NOT DISTINCT FROM OLD.pause_reason THEN\n    RETURN NULL;\n  END IF;\n  INSERT INTO events (type, instance_id, lane, data)\n  VALUES ('campaign.status', NEW.instance_id, 'campaign:' || NEW.id, jsonb_build_object(\n    'campaign_id', NEW.id, 'name', NEW.name, 'state', NEW.state,\n    'previous_state', CASE WHEN TG_OP = 'UPDATE' THEN OLD.state END,\n    'pause_reason', NEW.pause_reason,\n    'template', jsonb_build_object('id', NEW.template_id, 'name', NEW.template_name,\n      'language', NEW.template_language),\n    'recipients', NEW.recipients, 'duplicates', NEW.duplicates, 'invalid', NEW.invalid,\n    'counts', CASE WHEN NEW.state IN ('completed', 'cancelled') THEN (\n      SELECT COALESCE(jsonb_object_agg(s.state, s.n), '{}'::jsonb)\n      FROM (SELECT CASE WHEN r.state = 'claimed' THEN 'queued' ELSE r.state END AS state,\n              count(*) AS n\n            FROM campaign_recipients r WHERE r.campaign_id = NEW.id GROUP BY 1) s) END,\n    'at', mc_iso(now())));\n  RETURN NULL;\nEND $$",
  'CREATE TRIGGER tr_campaign_status AFTER INSERT OR UPDATE OF state, pause_reason\nON campaigns FOR EACH ROW EXECUTE FUNCTION mc_campaign_status()',
];

const DOWN = [
  'SET LOCAL check_function_bodies = off',
  "SET LOCAL lock_timeout = '5s'",
  'DROP TRIGGER IF EXISTS tr_campaign_status ON campaigns',
  'DROP FUNCTION mc_campaign_status()',
];
