import { sqlFunction, sqlTrigger, type SqlObject } from '../database/sql-objects.js';

/**
 * A template event is a `template.status` for each active instance of its
 * account: a status change, or a quality or category change (then `status`
 * is the template's current one).
 */
export const TEMPLATE_SQL: SqlObject[] = [
  sqlFunction(
    'mc_template_event_added',
    `
CREATE OR REPLACE FUNCTION mc_template_event_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events (type, instance_id, lane, data)
  SELECT 'template.status', i.id, 'template:' || NEW.template_id,
    jsonb_build_object(
      'template_id', NEW.template_id, 'name', NEW.template_name,
      'language', NEW.template_language, 'change', NEW.change,
      'status', CASE WHEN NEW.change = 'status' THEN NEW.event
        ELSE COALESCE((SELECT t.status FROM templates t WHERE t.template_id = NEW.template_id),
          NEW.event) END,
      'reason', NEW.reason, 'quality', NEW.quality, 'category', NEW.category,
      'previous_category', NEW.previous_category,
      'channel_account_id', NEW.channel_account_id, 'at', mc_iso(NEW.event_at))
  FROM instances i WHERE i.channel_account_id = NEW.channel_account_id AND i.is_active
  ORDER BY i.id;
  RETURN NULL;
END $$`,
  ),
  sqlTrigger(
    'tr_template_event_added',
    'template_events',
    `
CREATE TRIGGER tr_template_event_added AFTER INSERT ON template_events
FOR EACH ROW EXECUTE FUNCTION mc_template_event_added()`,
  ),
];
