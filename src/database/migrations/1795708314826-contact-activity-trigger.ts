import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * a contact's activity is its last message either way or its imported history's latest,
 * kept by a trigger; one with none lists last
 *
 * Written by `npm run sql:migration` from the current definitions (src/schema.ts):
 * - function mc_contact_activity(): added
 * - function mc_messages_inserted(): changed
 * - trigger tr_contact_activity on contacts: added
 */
export class ContactActivityTrigger1795708314826 implements MigrationInterface {
  name = 'ContactActivityTrigger1795708314826';

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
  'DROP TRIGGER IF EXISTS tr_contact_activity ON contacts',
  "CREATE OR REPLACE FUNCTION mc_contact_activity() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n  NEW.last_activity_at := COALESCE(\n    GREATEST(NEW.last_inbound_at, NEW.last_outbound_at, NEW.last_imported_at), 'epoch');\n  RETURN NEW;\nEND $$",
  "CREATE OR REPLACE FUNCTION mc_messages_inserted() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n  PERFORM mc_lock_contacts(ARRAY(\n    SELECT contact_id FROM added\n    WHERE (direction = 'outbound' AND type <> 'unknown' OR imported) AND contact_id IS NOT NULL));\n  UPDATE contacts c SET last_outbound_at = GREATEST(c.last_outbound_at, o.at)\n  FROM (SELECT contact_id, max(created_at) AS at FROM added\n        WHERE direction = 'outbound' AND contact_id IS NOT NULL AND type <> 'unknown'\n          AND NOT imported\n        GROUP BY contact_id) o\n  WHERE c.id = o.contact_id;\n  -- Imported history dates the contact's activity (not its window, not its last send).\n  UPDATE contacts c SET last_imported_at = GREATEST(c.last_imported_at, h.at)\n  FROM (SELECT contact_id, max(created_at) AS at FROM added\n        WHERE imported AND contact_id IS NOT NULL\n        GROUP BY contact_id) h\n  WHERE c.id = h.contact_id AND h.at > COALESCE(c.last_imported_at, '-infinity');\n  IF EXISTS (SELECT 1 FROM event_subscriptions) THEN\n    INSERT INTO events (type, instance_id, lane, data)\n    SELECT t.type, m.instance_id, mc_message_lane(m),\n      mc_message_event(m, c) || CASE\n        WHEN m.direction = 'inbound' THEN '{}'::jsonb\n        WHEN m.type = 'unknown' THEN jsonb_build_object('status', m.status, 'previous_status', NULL)\n        ELSE mc_sent_by(m) END\n    FROM added m\n    CROSS JOIN LATERAL (SELECT CASE WHEN m.direction = 'inbound' THEN 'message.received'\n                                    WHEN m.type = 'unknown' THEN 'message.status'\n                                    ELSE 'message.sent' END AS type) t\n    LEFT JOIN contacts c ON c.id = m.contact_id\n    -- Imported history is no news: its chunk's history.imported says it came.\n    WHERE NOT m.imported\n      AND EXISTS (SELECT 1 FROM event_subscriptions s\n                  WHERE (s.instance_id IS NULL OR s.instance_id = m.instance_id)\n                    AND t.type = ANY (s.event_types))\n    ORDER BY m.seq;\n  END IF;\n  IF EXISTS (SELECT 1 FROM live_listeners) THEN\n    PERFORM mc_live_notify('message', array_agg(instance_id ORDER BY seq), array_agg(id ORDER BY seq))\n    FROM added WHERE NOT imported;\n    -- Imported history (thousands of messages): each contact it reached, once, not each message.\n    PERFORM mc_live_notify('contact', array_agg(h.instance_id ORDER BY h.contact_id),\n      array_agg(h.contact_id ORDER BY h.contact_id))\n    FROM (SELECT DISTINCT instance_id, contact_id FROM added\n          WHERE imported AND contact_id IS NOT NULL) h;\n  END IF;\n  RETURN NULL;\nEND $$",
  'CREATE TRIGGER tr_contact_activity\nBEFORE INSERT OR UPDATE OF last_inbound_at, last_outbound_at, last_imported_at ON contacts\nFOR EACH ROW EXECUTE FUNCTION mc_contact_activity()',
];

const DOWN = [
  'SET LOCAL check_function_bodies = off',
  "SET LOCAL lock_timeout = '5s'",
  'DROP TRIGGER IF EXISTS tr_contact_activity ON contacts',
  'DROP FUNCTION mc_contact_activity()',
  "CREATE OR REPLACE FUNCTION mc_messages_inserted()\n RETURNS trigger\n LANGUAGE plpgsql\nAS $function$\nBEGIN\n  PERFORM mc_lock_contacts(ARRAY(\n    SELECT contact_id FROM added\n    WHERE direction = 'outbound' AND contact_id IS NOT NULL AND type <> 'unknown'));\n  UPDATE contacts c SET last_outbound_at = GREATEST(c.last_outbound_at, o.at)\n  FROM (SELECT contact_id, max(created_at) AS at FROM added\n        WHERE direction = 'outbound' AND contact_id IS NOT NULL AND type <> 'unknown'\n          AND NOT imported\n        GROUP BY contact_id) o\n  WHERE c.id = o.contact_id;\n  IF EXISTS (SELECT 1 FROM event_subscriptions) THEN\n    INSERT INTO events (type, instance_id, lane, data)\n    SELECT t.type, m.instance_id, mc_message_lane(m),\n      mc_message_event(m, c) || CASE\n        WHEN m.direction = 'inbound' THEN '{}'::jsonb\n        WHEN m.type = 'unknown' THEN jsonb_build_object('status', m.status, 'previous_status', NULL)\n        ELSE mc_sent_by(m) END\n    FROM added m\n    CROSS JOIN LATERAL (SELECT CASE WHEN m.direction = 'inbound' THEN 'message.received'\n                                    WHEN m.type = 'unknown' THEN 'message.status'\n                                    ELSE 'message.sent' END AS type) t\n    LEFT JOIN contacts c ON c.id = m.contact_id\n    -- Imported history is no news: its chunk's history.imported says it came.\n    WHERE NOT m.imported\n      AND EXISTS (SELECT 1 FROM event_subscriptions s\n                  WHERE (s.instance_id IS NULL OR s.instance_id = m.instance_id)\n                    AND t.type = ANY (s.event_types))\n    ORDER BY m.seq;\n  END IF;\n  IF EXISTS (SELECT 1 FROM live_listeners) THEN\n    PERFORM mc_live_notify('message', array_agg(instance_id ORDER BY seq), array_agg(id ORDER BY seq))\n    FROM added WHERE NOT imported;\n    -- Imported history (thousands of messages): each contact it reached, once, not each message.\n    PERFORM mc_live_notify('contact', array_agg(h.instance_id ORDER BY h.contact_id),\n      array_agg(h.contact_id ORDER BY h.contact_id))\n    FROM (SELECT DISTINCT instance_id, contact_id FROM added\n          WHERE imported AND contact_id IS NOT NULL) h;\n  END IF;\n  RETURN NULL;\nEND $function$\n",
];
