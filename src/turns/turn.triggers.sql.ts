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
  // A conversation shows a failed turn (and its error) beside its messages, live: the turn's
  // messages are told to the live streams when it fails, and when a retry takes it up again.
  sqlFunction(
    'mc_turn_live',
    `
CREATE OR REPLACE FUNCTION mc_turn_live() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM mc_live_notify('message', array_agg(m.instance_id), array_agg(m.id))
  FROM messages m WHERE m.turn_id = NEW.id;
  RETURN NULL;
END $$`,
  ),
  sqlTrigger(
    'tr_turn_live',
    'turns',
    `
CREATE TRIGGER tr_turn_live AFTER UPDATE OF status ON turns
FOR EACH ROW WHEN ((NEW.status = 'failed') IS DISTINCT FROM (OLD.status = 'failed'))
EXECUTE FUNCTION mc_turn_live()`,
  ),
];
