import { sqlFunction, sqlTrigger, type SqlObject } from '../database/sql-objects.js';

/** An instance's `instance.status` event: created, (de)activated, or its token refused. */
export const INSTANCE_SQL: SqlObject[] = [
  sqlFunction(
    'mc_instance_status',
    `
CREATE OR REPLACE FUNCTION mc_instance_status() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  status text;
BEGIN
  IF TG_OP = 'INSERT' THEN
    status := CASE WHEN NEW.is_active THEN 'activated' ELSE 'deactivated' END;
  ELSIF NEW.token_rejected_at IS NOT NULL AND OLD.token_rejected_at IS NULL THEN
    status := 'token_rejected';
  ELSIF NEW.is_active IS DISTINCT FROM OLD.is_active THEN
    status := CASE WHEN NEW.is_active THEN 'activated' ELSE 'deactivated' END;
  ELSE
    RETURN NULL;
  END IF;
  INSERT INTO events (type, instance_id, lane, data)
  VALUES ('instance.status', NEW.id, 'instance:' || NEW.id, jsonb_build_object(
    'status', status, 'name', NEW.name, 'phone_number_id', NEW.phone_number_id,
    'display_phone_number', NEW.display_phone_number, 'is_active', NEW.is_active,
    'token_rejected_at', mc_iso(NEW.token_rejected_at)));
  RETURN NULL;
END $$`,
  ),
  sqlTrigger(
    'tr_instance_status',
    'instances',
    `
CREATE TRIGGER tr_instance_status AFTER INSERT OR UPDATE OF is_active, token_rejected_at
ON instances FOR EACH ROW EXECUTE FUNCTION mc_instance_status()`,
  ),
];
