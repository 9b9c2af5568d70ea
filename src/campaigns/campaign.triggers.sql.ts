import { sqlFunction, sqlTrigger, type SqlObject } from '../database/sql-objects.js';

/**
 * A campaign's `campaign.status` event on each change of state: created (a
 * draft), scheduled, running, paused (with why), completed or cancelled;
 * a campaign that ends carries its recipients' counts by state.
 */
export const CAMPAIGN_SQL: SqlObject[] = [
  sqlFunction(
    'mc_campaign_status',
    `
CREATE OR REPLACE FUNCTION mc_campaign_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.state = OLD.state
     AND NEW.pause_reason IS NOT DISTINCT FROM OLD.pause_reason THEN
    RETURN NULL;
  END IF;
  INSERT INTO events (type, instance_id, lane, data)
  VALUES ('campaign.status', NEW.instance_id, 'campaign:' || NEW.id, jsonb_build_object(
    'campaign_id', NEW.id, 'name', NEW.name, 'state', NEW.state,
    'previous_state', CASE WHEN TG_OP = 'UPDATE' THEN OLD.state END,
    'pause_reason', NEW.pause_reason,
    'template', jsonb_build_object('id', NEW.template_id, 'name', NEW.template_name,
      'language', NEW.template_language),
    'recipients', NEW.recipients, 'duplicates', NEW.duplicates, 'invalid', NEW.invalid,
    'counts', CASE WHEN NEW.state IN ('completed', 'cancelled') THEN (
      SELECT COALESCE(jsonb_object_agg(s.state, s.n), '{}'::jsonb)
      FROM (SELECT CASE WHEN r.state = 'claimed' THEN 'queued' ELSE r.state END AS state,
              count(*) AS n
            FROM campaign_recipients r WHERE r.campaign_id = NEW.id GROUP BY 1) s) END,
    'at', mc_iso(now())));
  RETURN NULL;
END $$`,
  ),
  sqlTrigger(
    'tr_campaign_status',
    'campaigns',
    `
CREATE TRIGGER tr_campaign_status AFTER INSERT OR UPDATE OF state, pause_reason
ON campaigns FOR EACH ROW EXECUTE FUNCTION mc_campaign_status()`,
  ),
];
