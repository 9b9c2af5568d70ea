import type { MigrationInterface, QueryRunner } from 'typeorm';
import {
  MESSAGE_UPDATED_WITH_OUTBOUND,
  MESSAGES_INSERTED_WITH_OUTBOUND,
} from './1764500000000-conversations-and-handoff.js';

/**
 * Events are written only when a subscription, enabled or not, wants them
 * (its instance or every instance, and its types): a deployment that
 * forwards nothing pays nothing for the outbox, and a disabled subscription
 * still has its events recorded for a replay. The message triggers (the hot
 * path) check before building an event; the rare writers (template, turn,
 * instance, handoff) are filtered by a trigger on `events` itself. Pings are
 * addressed to one subscription and always written.
 */
export class EventsWhenWanted1764700000000 implements MigrationInterface {
  name = 'EventsWhenWanted1764700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const q = (sql: string) => queryRunner.query(sql);
    await q(
      '\n      CREATE FUNCTION mc_event_wanted(instance uuid, event_type text) RETURNS boolean\n      LANGUAGE sql STABLE AS $$\n        SELECT EXISTS (SELECT 1 FROM event_subscriptions s\n                       WHERE (s.instance_id IS NULL OR s.instance_id = $1)\n                         AND $2 = ANY (s.event_types))\n      $$',
    );
    await q(
      "\n      CREATE OR REPLACE FUNCTION mc_messages_inserted() RETURNS trigger LANGUAGE plpgsql AS $$\n      BEGIN\n        IF EXISTS (SELECT 1 FROM event_subscriptions) THEN\n          INSERT INTO events (type, instance_id, lane, data)\n          SELECT t.type, m.instance_id, mc_message_lane(m),\n            mc_message_event(m, c) || CASE\n              WHEN m.direction = 'inbound' THEN '{}'::jsonb\n              WHEN m.type = 'unknown' THEN jsonb_build_object('status', m.status, 'previous_status', NULL)\n              ELSE jsonb_build_object('sent_by', COALESCE(m.sent_by, 'api')) END\n          FROM added m\n          CROSS JOIN LATERAL (SELECT CASE WHEN m.direction = 'inbound' THEN 'message.received'\n                                          WHEN m.type = 'unknown' THEN 'message.status'\n                                          ELSE 'message.sent' END AS type) t\n          LEFT JOIN contacts c ON c.id = m.contact_id\n          WHERE mc_event_wanted(m.instance_id, t.type)\n          ORDER BY m.seq;\n        END IF;\n        UPDATE contacts c SET last_outbound_at = GREATEST(c.last_outbound_at, o.at)\n        FROM (SELECT contact_id, max(created_at) AS at FROM added\n              WHERE direction = 'outbound' AND contact_id IS NOT NULL AND type <> 'unknown'\n              GROUP BY contact_id) o\n        WHERE c.id = o.contact_id;\n        RETURN NULL;\n      END $$",
    );
    await q(
      "\n      CREATE OR REPLACE FUNCTION mc_message_updated() RETURNS trigger LANGUAGE plpgsql AS $$\n      DECLARE\n        c contacts;\n      BEGIN\n        IF OLD.type = 'unknown' AND NEW.type <> 'unknown' THEN\n          IF mc_event_wanted(NEW.instance_id, 'message.sent') THEN\n            SELECT * INTO c FROM contacts WHERE id = NEW.contact_id;\n            INSERT INTO events (type, instance_id, lane, data)\n            VALUES ('message.sent', NEW.instance_id, mc_message_lane(NEW),\n              mc_message_event(NEW, c) || jsonb_build_object('sent_by', COALESCE(NEW.sent_by, 'api')));\n          END IF;\n          UPDATE contacts SET last_outbound_at = GREATEST(last_outbound_at, NEW.created_at)\n          WHERE id = NEW.contact_id;\n        END IF;\n        IF OLD.status IS DISTINCT FROM NEW.status\n           AND mc_event_wanted(NEW.instance_id, 'message.status') THEN\n          SELECT * INTO c FROM contacts WHERE id = NEW.contact_id;\n          INSERT INTO events (type, instance_id, lane, data)\n          VALUES ('message.status', NEW.instance_id, mc_message_lane(NEW),\n            mc_message_event(NEW, c)\n              || jsonb_build_object('status', NEW.status, 'previous_status', OLD.status));\n        END IF;\n        RETURN NULL;\n      END $$",
    );
    await q(
      '\n      CREATE FUNCTION mc_event_unwanted() RETURNS trigger LANGUAGE plpgsql AS $$\n      BEGIN\n        IF mc_event_wanted(NEW.instance_id, NEW.type) THEN\n          RETURN NEW;\n        END IF;\n        RETURN NULL;\n      END $$',
    );
    // Message events are checked where they are made (above); pings always go.
    await q(
      "\n      CREATE TRIGGER tr_event_unwanted BEFORE INSERT ON events FOR EACH ROW\n      WHEN (NEW.type <> 'ping' AND NEW.type NOT LIKE 'message.%')\n      EXECUTE FUNCTION mc_event_unwanted()",
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const q = (sql: string) => queryRunner.query(sql);
    await q(`DROP TRIGGER tr_event_unwanted ON events`);
    await q(`DROP FUNCTION mc_event_unwanted()`);
    await q(MESSAGES_INSERTED_WITH_OUTBOUND);
    await q(MESSAGE_UPDATED_WITH_OUTBOUND);
    await q(`DROP FUNCTION mc_event_wanted(uuid, text)`);
  }
}
