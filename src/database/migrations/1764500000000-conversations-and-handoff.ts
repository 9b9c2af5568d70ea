import type { MigrationInterface, QueryRunner } from 'typeorm';
import { MESSAGE_UPDATED, MESSAGES_INSERTED } from './1764400000000-event-forwarding.js';

/** The messages triggers' functions as this migration made them (a later one's down restores them). */
export const MESSAGES_INSERTED_WITH_OUTBOUND =
  "\n      CREATE OR REPLACE FUNCTION mc_messages_inserted() RETURNS trigger LANGUAGE plpgsql AS $$\n      BEGIN\n        INSERT INTO events (type, instance_id, lane, data)\n        SELECT CASE WHEN m.direction = 'inbound' THEN 'message.received'\n                    WHEN m.type = 'unknown' THEN 'message.status'\n                    ELSE 'message.sent' END,\n          m.instance_id, mc_message_lane(m),\n          mc_message_event(m, c) || CASE\n            WHEN m.direction = 'inbound' THEN '{}'::jsonb\n            WHEN m.type = 'unknown' THEN jsonb_build_object('status', m.status, 'previous_status', NULL)\n            ELSE jsonb_build_object('sent_by', COALESCE(m.sent_by, 'api')) END\n        FROM added m LEFT JOIN contacts c ON c.id = m.contact_id\n        ORDER BY m.seq;\n        UPDATE contacts c SET last_outbound_at = GREATEST(c.last_outbound_at, o.at)\n        FROM (SELECT contact_id, max(created_at) AS at FROM added\n              WHERE direction = 'outbound' AND contact_id IS NOT NULL AND type <> 'unknown'\n              GROUP BY contact_id) o\n        WHERE c.id = o.contact_id;\n        RETURN NULL;\n      END $$";

export const MESSAGE_UPDATED_WITH_OUTBOUND =
  "\n      CREATE OR REPLACE FUNCTION mc_message_updated() RETURNS trigger LANGUAGE plpgsql AS $$\n      DECLARE\n        c contacts;\n      BEGIN\n        SELECT * INTO c FROM contacts WHERE id = NEW.contact_id;\n        IF OLD.type = 'unknown' AND NEW.type <> 'unknown' THEN\n          INSERT INTO events (type, instance_id, lane, data)\n          VALUES ('message.sent', NEW.instance_id, mc_message_lane(NEW),\n            mc_message_event(NEW, c) || jsonb_build_object('sent_by', COALESCE(NEW.sent_by, 'api')));\n          UPDATE contacts SET last_outbound_at = GREATEST(last_outbound_at, NEW.created_at)\n          WHERE id = NEW.contact_id;\n        END IF;\n        IF OLD.status IS DISTINCT FROM NEW.status THEN\n          INSERT INTO events (type, instance_id, lane, data)\n          VALUES ('message.status', NEW.instance_id, mc_message_lane(NEW),\n            mc_message_event(NEW, c)\n              || jsonb_build_object('status', NEW.status, 'previous_status', OLD.status));\n        END IF;\n        RETURN NULL;\n      END $$";

/**
 * Conversations and handoff. Contacts get their last outbound time (kept by
 * the messages trigger), their last activity (generated from both times), a
 * handoff (the agent paused for them until a time, with why and by whom) and
 * an opt-out. Indexes serve GET /contacts (newest activity first, searched
 * by number or name prefix) and a contact's conversation (in arrival order).
 * A handoff change is a `contact.handoff` event.
 */
export class ConversationsAndHandoff1764500000000 implements MigrationInterface {
  name = 'ConversationsAndHandoff1764500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const q = (sql: string) => queryRunner.query(sql);
    await q(`
      ALTER TABLE contacts
        ADD COLUMN last_outbound_at timestamptz,
        ADD COLUMN handoff_until timestamptz,
        ADD COLUMN handoff_since timestamptz,
        ADD COLUMN handoff_reason varchar(500),
        ADD COLUMN handoff_by varchar(8),
        ADD COLUMN opted_out_at timestamptz`);
    await q(`
      UPDATE contacts c SET last_outbound_at = o.at
      FROM (SELECT contact_id, max(created_at) AS at FROM messages
            WHERE direction = 'outbound' AND contact_id IS NOT NULL AND type <> 'unknown'
            GROUP BY contact_id) o
      WHERE c.id = o.contact_id`);
    await q(`
      ALTER TABLE contacts ADD COLUMN last_activity_at timestamptz
        GENERATED ALWAYS AS (COALESCE(GREATEST(last_inbound_at, last_outbound_at), created_at)) STORED`);
    // Never null (its creation time when it has no message): DESC as the listing sorts.
    await q(
      `CREATE INDEX ix_contacts_activity ON contacts (instance_id, last_activity_at DESC, id DESC)`,
    );
    await q(
      `CREATE INDEX ix_contacts_wa_id_prefix ON contacts (instance_id, wa_id text_pattern_ops)`,
    );
    await q(`CREATE INDEX ix_contacts_name_prefix
             ON contacts (instance_id, lower(name) text_pattern_ops)`);
    await q(
      `CREATE INDEX ix_contacts_handoff ON contacts (handoff_until) WHERE handoff_until IS NOT NULL`,
    );
    // A conversation reads in arrival order (seq): pages stay stable as messages arrive.
    await q(`DROP INDEX ix_messages_contact`);
    await q(
      `CREATE INDEX ix_messages_contact ON messages (contact_id, seq) WHERE contact_id IS NOT NULL`,
    );

    // Sends move their contact's last outbound time (recorded ones, and placeholders completed).
    await q(MESSAGES_INSERTED_WITH_OUTBOUND);
    await q(MESSAGE_UPDATED_WITH_OUTBOUND);

    await q(
      "\n      CREATE FUNCTION mc_contact_handoff() RETURNS trigger LANGUAGE plpgsql AS $$\n      BEGIN\n        INSERT INTO events (type, instance_id, lane, data)\n        VALUES ('contact.handoff', NEW.instance_id, 'contact:' || NEW.id, jsonb_build_object(\n          'paused', NEW.handoff_until IS NOT NULL AND NEW.handoff_until > now(),\n          'until', mc_iso(NEW.handoff_until), 'since', mc_iso(NEW.handoff_since),\n          'reason', NEW.handoff_reason, 'by', NEW.handoff_by,\n          'contact', jsonb_build_object('wa_id', NEW.wa_id, 'user_id', NEW.user_id, 'name', NEW.name)));\n        RETURN NULL;\n      END $$",
    );
    await q(
      '\n      CREATE TRIGGER tr_contact_handoff AFTER UPDATE OF handoff_until, handoff_by ON contacts\n      FOR EACH ROW WHEN (OLD.handoff_until IS DISTINCT FROM NEW.handoff_until\n                         OR OLD.handoff_by IS DISTINCT FROM NEW.handoff_by)\n      EXECUTE FUNCTION mc_contact_handoff()',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const q = (sql: string) => queryRunner.query(sql);
    await q(`DROP TRIGGER tr_contact_handoff ON contacts`);
    await q(`DROP FUNCTION mc_contact_handoff()`);
    await q(MESSAGES_INSERTED);
    await q(MESSAGE_UPDATED);
    await q(`DROP INDEX ix_messages_contact`);
    await q(`CREATE INDEX ix_messages_contact ON messages (contact_id, created_at)
             WHERE contact_id IS NOT NULL`);
    await q(`ALTER TABLE contacts DROP COLUMN last_activity_at, DROP COLUMN last_outbound_at,
             DROP COLUMN handoff_until, DROP COLUMN handoff_since, DROP COLUMN handoff_reason,
             DROP COLUMN handoff_by, DROP COLUMN opted_out_at`);
  }
}
