import { sqlFunction, sqlTrigger, type SqlObject } from '../database/sql-objects.js';

/**
 * What happens in PostgreSQL when a message row is written: its events
 * (`message.received`, `message.sent`, `message.status`) in the shapes of the
 * API (events/dto/event-payloads.dto.ts), its contact's last send, and its
 * position for the conversation's followers. Contacts are locked before the
 * events reach their lanes, in the order of database/lock-order.ts.
 */
export const MESSAGE_SQL: SqlObject[] = [
  // An event's `data` for a message and its contact (either may be unknown yet).
  sqlFunction(
    'mc_message_event',
    `
CREATE OR REPLACE FUNCTION mc_message_event(m messages, c contacts) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'message', jsonb_build_object(
      'wamid', m.wamid, 'instance_id', m.instance_id, 'direction', m.direction,
      'contact', m.contact, 'wa_id', c.wa_id, 'user_id', c.user_id, 'type', m.type,
      'status', m.status, 'errors', m.errors, 'content', m.body,
      'created_at', mc_iso(m.created_at), 'updated_at', mc_iso(m.updated_at)),
    'contact', jsonb_build_object(
      'wa_id', COALESCE(c.wa_id, CASE WHEN m.contact ~ '^[0-9]+$' THEN m.contact END),
      'user_id', c.user_id, 'name', c.name, 'username', c.username))
$$`,
  ),

  // Who sent a message, as its message.sent event says: a client (api), the agent, or a
  // person who logged in, with their account.
  sqlFunction(
    'mc_sent_by',
    `
CREATE OR REPLACE FUNCTION mc_sent_by(m messages) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_build_object('sent_by', COALESCE(m.sent_by, 'api'),
    'sent_by_account', CASE WHEN m.sent_by_account_name IS NOT NULL THEN jsonb_build_object(
      'id', m.sent_by_account_id, 'display_name', m.sent_by_account_name) END)
$$`,
  ),

  // A message's events keep its contact's order: one lane per contact (or per address
  // while the message has no contact yet).
  sqlFunction(
    'mc_message_lane',
    `
CREATE OR REPLACE FUNCTION mc_message_lane(m messages) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT 'contact:' || COALESCE(m.contact_id::text, m.instance_id::text || ':' || m.contact)
$$`,
  ),

  // New rows: the contacts of the sends recorded move their last send, then each row's
  // event. A status for a wamid not stored yet makes a placeholder (type 'unknown'): its
  // event is the status; the send that completes it is an update (mc_messages_updated).
  sqlFunction(
    'mc_messages_inserted',
    `
CREATE OR REPLACE FUNCTION mc_messages_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM mc_lock_contacts(ARRAY(
    SELECT contact_id FROM added
    WHERE (direction = 'outbound' AND type <> 'unknown' OR imported) AND contact_id IS NOT NULL));
  UPDATE contacts c SET last_outbound_at = GREATEST(c.last_outbound_at, o.at)
  FROM (SELECT contact_id, max(created_at) AS at FROM added
        WHERE direction = 'outbound' AND contact_id IS NOT NULL AND type <> 'unknown'
          AND NOT imported
        GROUP BY contact_id) o
  WHERE c.id = o.contact_id;
  -- Imported history dates the contact's activity (not its window, not its last send).
  UPDATE contacts c SET last_imported_at = GREATEST(c.last_imported_at, h.at)
  FROM (SELECT contact_id, max(created_at) AS at FROM added
        WHERE imported AND contact_id IS NOT NULL
        GROUP BY contact_id) h
  WHERE c.id = h.contact_id AND h.at > COALESCE(c.last_imported_at, '-infinity');
  IF EXISTS (SELECT 1 FROM event_subscriptions) THEN
    INSERT INTO events (type, instance_id, lane, data)
    SELECT t.type, m.instance_id, mc_message_lane(m),
      mc_message_event(m, c) || CASE
        WHEN m.direction = 'inbound' THEN '{}'::jsonb
        WHEN m.type = 'unknown' THEN jsonb_build_object('status', m.status, 'previous_status', NULL)
        ELSE mc_sent_by(m) END
    FROM added m
    CROSS JOIN LATERAL (SELECT CASE WHEN m.direction = 'inbound' THEN 'message.received'
                                    WHEN m.type = 'unknown' THEN 'message.status'
                                    ELSE 'message.sent' END AS type) t
    LEFT JOIN contacts c ON c.id = m.contact_id
    -- Imported history is no news: its chunk's history.imported says it came.
    WHERE NOT m.imported
      AND EXISTS (SELECT 1 FROM event_subscriptions s
                  WHERE (s.instance_id IS NULL OR s.instance_id = m.instance_id)
                    AND t.type = ANY (s.event_types))
    ORDER BY m.seq;
  END IF;
  IF EXISTS (SELECT 1 FROM live_listeners) THEN
    PERFORM mc_live_notify('message', array_agg(instance_id ORDER BY seq), array_agg(id ORDER BY seq))
    FROM added WHERE NOT imported;
    -- Imported history (thousands of messages): each contact it reached, once, not each message.
    PERFORM mc_live_notify('contact', array_agg(h.instance_id ORDER BY h.contact_id),
      array_agg(h.contact_id ORDER BY h.contact_id))
    FROM (SELECT DISTINCT instance_id, contact_id FROM added
          WHERE imported AND contact_id IS NOT NULL) h;
  END IF;
  RETURN NULL;
END $$`,
  ),
  sqlTrigger(
    'tr_messages_inserted',
    'messages',
    `
CREATE TRIGGER tr_messages_inserted AFTER INSERT ON messages
REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION mc_messages_inserted()`,
  ),

  // Changed rows, a statement at a time (one row at a time, a batch of statuses and the
  // dispatcher took the same lanes in opposite orders): a placeholder a send completed
  // (type 'unknown' becomes the send's) is that send's message.sent and moves its
  // contact's last send; a new status is a message.status.
  sqlFunction(
    'mc_messages_updated',
    `
CREATE OR REPLACE FUNCTION mc_messages_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM mc_lock_contacts(ARRAY(
    SELECT n.contact_id FROM after_rows n JOIN before_rows o ON o.id = n.id
    WHERE o.type = 'unknown' AND n.type <> 'unknown' AND n.contact_id IS NOT NULL));
  UPDATE contacts c SET last_outbound_at = GREATEST(c.last_outbound_at, s.at)
  FROM (SELECT n.contact_id, max(n.created_at) AS at
        FROM after_rows n JOIN before_rows o ON o.id = n.id
        WHERE o.type = 'unknown' AND n.type <> 'unknown' AND n.contact_id IS NOT NULL
        GROUP BY n.contact_id) s
  WHERE c.id = s.contact_id;
  IF EXISTS (SELECT 1 FROM event_subscriptions) THEN
    INSERT INTO events (type, instance_id, lane, data)
    SELECT e.type, n.instance_id, mc_message_lane(n),
      mc_message_event(n, c) || CASE e.type
        WHEN 'message.sent' THEN mc_sent_by(n)
        ELSE jsonb_build_object('status', n.status, 'previous_status', o.status) END
    FROM after_rows n
    JOIN before_rows o ON o.id = n.id
    CROSS JOIN LATERAL (
      SELECT 'message.sent' AS type, 1 AS rank WHERE o.type = 'unknown' AND n.type <> 'unknown'
      UNION ALL
      SELECT 'message.status', 2 WHERE o.status IS DISTINCT FROM n.status) e
    LEFT JOIN contacts c ON c.id = n.contact_id
    WHERE EXISTS (SELECT 1 FROM event_subscriptions s
                  WHERE (s.instance_id IS NULL OR s.instance_id = n.instance_id)
                    AND e.type = ANY (s.event_types))
    ORDER BY n.seq, e.rank;
  END IF;
  IF EXISTS (SELECT 1 FROM live_listeners) THEN
    -- What a conversation shows changed (not a turn's claim of its messages).
    PERFORM mc_live_notify('message', array_agg(n.instance_id ORDER BY n.seq),
      array_agg(n.id ORDER BY n.seq))
    FROM after_rows n JOIN before_rows o ON o.id = n.id
    WHERE o.status IS DISTINCT FROM n.status OR o.type <> n.type
       OR o.contact_id IS DISTINCT FROM n.contact_id
       -- An echo relabelled as this service's own send.
       OR o.sent_by IS DISTINCT FROM n.sent_by;
  END IF;
  RETURN NULL;
END $$`,
  ),
  sqlTrigger(
    'tr_messages_updated',
    'messages',
    `
CREATE TRIGGER tr_messages_updated AFTER UPDATE ON messages
REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
FOR EACH STATEMENT EXECUTE FUNCTION mc_messages_updated()`,
  ),

  // A message that joins a contact later (a placeholder its send completes, a merge of two
  // contacts) is new to whoever follows that contact: it moves to the mover's position.
  sqlFunction(
    'mc_message_moved',
    `
CREATE OR REPLACE FUNCTION mc_message_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.stored_tx := pg_current_xact_id();
  RETURN NEW;
END $$`,
  ),
  sqlTrigger(
    'tr_message_moved',
    'messages',
    `
CREATE TRIGGER tr_message_moved BEFORE UPDATE OF contact_id ON messages
FOR EACH ROW WHEN (NEW.contact_id IS NOT NULL AND OLD.contact_id IS DISTINCT FROM NEW.contact_id)
EXECUTE FUNCTION mc_message_moved()`,
  ),
];
