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
    await q(`
      CREATE FUNCTION mc_event_wanted(instance uuid, event_type text) RETURNS boolean
      LANGUAGE sql STABLE AS $$
        SELECT EXISTS (SELECT 1 FROM event_subscriptions s
                       WHERE (s.instance_id IS NULL OR s.instance_id = $1)
                         AND $2 = ANY (s.event_types))
      $$`);
    await q(`
      CREATE OR REPLACE FUNCTION mc_messages_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM event_subscriptions) THEN
          INSERT INTO events (type, instance_id, lane, data)
          SELECT t.type, m.instance_id, mc_message_lane(m),
            mc_message_event(m, c) || CASE
              WHEN m.direction = 'inbound' THEN '{}'::jsonb
              WHEN m.type = 'unknown' THEN jsonb_build_object('status', m.status, 'previous_status', NULL)
              ELSE jsonb_build_object('sent_by', COALESCE(m.sent_by, 'api')) END
          FROM added m
          CROSS JOIN LATERAL (SELECT CASE WHEN m.direction = 'inbound' THEN 'message.received'
                                          WHEN m.type = 'unknown' THEN 'message.status'
                                          ELSE 'message.sent' END AS type) t
          LEFT JOIN contacts c ON c.id = m.contact_id
          WHERE mc_event_wanted(m.instance_id, t.type)
          ORDER BY m.seq;
        END IF;
        UPDATE contacts c SET last_outbound_at = GREATEST(c.last_outbound_at, o.at)
        FROM (SELECT contact_id, max(created_at) AS at FROM added
              WHERE direction = 'outbound' AND contact_id IS NOT NULL AND type <> 'unknown'
              GROUP BY contact_id) o
        WHERE c.id = o.contact_id;
        RETURN NULL;
      END $$`);
    await q(`
      CREATE OR REPLACE FUNCTION mc_message_updated() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        c contacts;
      BEGIN
        IF OLD.type = 'unknown' AND NEW.type <> 'unknown' THEN
          IF mc_event_wanted(NEW.instance_id, 'message.sent') THEN
            SELECT * INTO c FROM contacts WHERE id = NEW.contact_id;
            INSERT INTO events (type, instance_id, lane, data)
            VALUES ('message.sent', NEW.instance_id, mc_message_lane(NEW),
              mc_message_event(NEW, c) || jsonb_build_object('sent_by', COALESCE(NEW.sent_by, 'api')));
          END IF;
          UPDATE contacts SET last_outbound_at = GREATEST(last_outbound_at, NEW.created_at)
          WHERE id = NEW.contact_id;
        END IF;
        IF OLD.status IS DISTINCT FROM NEW.status
           AND mc_event_wanted(NEW.instance_id, 'message.status') THEN
          SELECT * INTO c FROM contacts WHERE id = NEW.contact_id;
          INSERT INTO events (type, instance_id, lane, data)
          VALUES ('message.status', NEW.instance_id, mc_message_lane(NEW),
            mc_message_event(NEW, c)
              || jsonb_build_object('status', NEW.status, 'previous_status', OLD.status));
        END IF;
        RETURN NULL;
      END $$`);
    await q(`
      CREATE FUNCTION mc_event_unwanted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF mc_event_wanted(NEW.instance_id, NEW.type) THEN
          RETURN NEW;
        END IF;
        RETURN NULL;
      END $$`);
    // Message events are checked where they are made (above); pings always go.
    await q(`
      CREATE TRIGGER tr_event_unwanted BEFORE INSERT ON events FOR EACH ROW
      WHEN (NEW.type <> 'ping' AND NEW.type NOT LIKE 'message.%')
      EXECUTE FUNCTION mc_event_unwanted()`);
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
