import { sqlFunction, sqlTrigger, type SqlObject } from '../database/sql-objects.js';

/** A `history.imported` event for each chunk of history imported (once: a re-delivery adds no row). */
export const HISTORY_SQL: SqlObject[] = [
  sqlFunction(
    'mc_history_imported',
    `
CREATE OR REPLACE FUNCTION mc_history_imported() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events (type, instance_id, lane, data)
  VALUES ('history.imported', NEW.instance_id, 'history:' || NEW.instance_id,
    jsonb_build_object('phase', NEW.phase, 'chunk_order', NEW.chunk_order,
      'progress', NEW.progress, 'messages', NEW.messages, 'stored', NEW.stored,
      'at', mc_iso(NEW.imported_at)));
  RETURN NULL;
END $$`,
  ),
  sqlTrigger(
    'tr_history_imported',
    'history_chunks',
    `
CREATE TRIGGER tr_history_imported AFTER INSERT ON history_chunks
FOR EACH ROW EXECUTE FUNCTION mc_history_imported()`,
  ),
];
