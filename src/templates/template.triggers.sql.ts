import { sqlFunction, sqlTrigger, type SqlObject } from '../database/sql-objects.js';

/** A template event is a `template.status` for each active instance of its account. */
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
      'language', NEW.template_language, 'status', NEW.event, 'reason', NEW.reason,
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
