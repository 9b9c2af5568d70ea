import { sqlFunction, sqlTrigger, type SqlObject } from '../database/sql-objects.js';
import { OPEN_TURN_STATES_SQL } from './turn-states.js';

/** A turn's SQL: which states are open, and the `turn.failed` event of a dead letter. */
export const TURN_SQL: SqlObject[] = [
  // For the SQL of other tables (a merge of contacts waits for their open turns).
  sqlFunction(
    'mc_turn_open',
    `
CREATE OR REPLACE FUNCTION mc_turn_open(status text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT status IN ${OPEN_TURN_STATES_SQL}
$$`,
  ),
  sqlFunction(
    'mc_turn_failed',
    `
CREATE OR REPLACE FUNCTION mc_turn_failed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events (type, instance_id, lane, data)
  SELECT 'turn.failed', NEW.instance_id, 'contact:' || NEW.contact_id,
    jsonb_build_object(
      'turn_id', NEW.id, 'error', NEW.last_error, 'attempts', NEW.attempts,
      'created_at', mc_iso(NEW.created_at),
      'contact', jsonb_build_object('wa_id', c.wa_id, 'user_id', c.user_id, 'name', c.name))
  FROM contacts c WHERE c.id = NEW.contact_id;
  RETURN NULL;
END $$`,
  ),
  sqlTrigger(
    'tr_turn_failed',
    'turns',
    `
CREATE TRIGGER tr_turn_failed AFTER UPDATE OF status ON turns
FOR EACH ROW WHEN (NEW.status = 'failed' AND OLD.status IS DISTINCT FROM 'failed')
EXECUTE FUNCTION mc_turn_failed()`,
  ),
];
