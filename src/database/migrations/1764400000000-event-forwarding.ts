import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The messages triggers' functions as this migration made them (a later one's down restores them). */
export const MESSAGES_INSERTED =
  "\n      CREATE OR REPLACE FUNCTION mc_messages_inserted() RETURNS trigger LANGUAGE plpgsql AS $$\n      BEGIN\n        INSERT INTO events (type, instance_id, lane, data)\n        SELECT CASE WHEN m.direction = 'inbound' THEN 'message.received'\n                    WHEN m.type = 'unknown' THEN 'message.status'\n                    ELSE 'message.sent' END,\n          m.instance_id, mc_message_lane(m),\n          mc_message_event(m, c) || CASE\n            WHEN m.direction = 'inbound' THEN '{}'::jsonb\n            WHEN m.type = 'unknown' THEN jsonb_build_object('status', m.status, 'previous_status', NULL)\n            ELSE jsonb_build_object('sent_by', COALESCE(m.sent_by, 'api')) END\n        FROM added m LEFT JOIN contacts c ON c.id = m.contact_id\n        ORDER BY m.seq;\n        RETURN NULL;\n      END $$";

export const MESSAGE_UPDATED =
  "\n      CREATE OR REPLACE FUNCTION mc_message_updated() RETURNS trigger LANGUAGE plpgsql AS $$\n      DECLARE\n        c contacts;\n      BEGIN\n        SELECT * INTO c FROM contacts WHERE id = NEW.contact_id;\n        IF OLD.type = 'unknown' AND NEW.type <> 'unknown' THEN\n          INSERT INTO events (type, instance_id, lane, data)\n          VALUES ('message.sent', NEW.instance_id, mc_message_lane(NEW),\n            mc_message_event(NEW, c) || jsonb_build_object('sent_by', COALESCE(NEW.sent_by, 'api')));\n        END IF;\n        IF OLD.status IS DISTINCT FROM NEW.status THEN\n          INSERT INTO events (type, instance_id, lane, data)\n          VALUES ('message.status', NEW.instance_id, mc_message_lane(NEW),\n            mc_message_event(NEW, c)\n              || jsonb_build_object('status', NEW.status, 'previous_status', OLD.status));\n        END IF;\n        RETURN NULL;\n      END $$";

/**
 * Client event forwarding. `events` is an outbox written by triggers on the
 * tables whose changes it reports, so an event commits or rolls back with
 * its change whatever code path made it. A trigger on `events` fans each one
 * out to the enabled subscriptions that want it (`event_deliveries`), and a
 * trigger on the deliveries keeps `event_lanes`: one row per subscription
 * and ordering key (a contact, a template, an instance) with pending
 * deliveries, which the workers lease, so one key's events go out one at a
 * time and in order while different keys go in parallel.
 */
export class EventForwarding1764400000000 implements MigrationInterface {
  name = 'EventForwarding1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const q = (sql: string) => queryRunner.query(sql);
    await q(`ALTER TABLE messages ADD COLUMN sent_by varchar(8)`);
    await q(`ALTER TABLE instances ADD COLUMN token_rejected_at timestamptz`);

    await q(`
      CREATE TABLE events (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        type varchar(40) NOT NULL,
        instance_id uuid,
        lane text NOT NULL,
        data jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_events_id UNIQUE (id)
      )`);
    await q(`CREATE INDEX ix_events_created ON events (created_at)`);
    await q(`
      CREATE TABLE event_subscriptions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        url text NOT NULL,
        instance_id uuid REFERENCES instances (id) ON DELETE CASCADE,
        event_types text[] NOT NULL,
        description varchar(500),
        enabled boolean NOT NULL DEFAULT true,
        disabled_reason varchar(300),
        secret_encrypted text NOT NULL,
        previous_secret_encrypted text,
        previous_secret_until timestamptz,
        failing_since timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q(`CREATE INDEX ix_event_subscriptions_instance ON event_subscriptions (instance_id)`);
    await q(`
      CREATE TABLE event_deliveries (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        subscription_id uuid NOT NULL REFERENCES event_subscriptions (id) ON DELETE CASCADE,
        event_seq bigint NOT NULL REFERENCES events (seq) ON DELETE CASCADE,
        lane text NOT NULL,
        state varchar(12) NOT NULL DEFAULT 'pending',
        attempts integer NOT NULL DEFAULT 0,
        failures integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        last_attempt_at timestamptz,
        last_status integer,
        last_response varchar(1024),
        last_error varchar(300),
        delivered_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_event_deliveries_id UNIQUE (id)
      )`);
    await q(`CREATE INDEX ix_event_deliveries_lane ON event_deliveries (subscription_id, lane, event_seq)
             WHERE state = 'pending'`);
    await q(
      `CREATE INDEX ix_event_deliveries_listing ON event_deliveries (subscription_id, seq DESC)`,
    );
    await q(`CREATE INDEX ix_event_deliveries_event ON event_deliveries (event_seq)`);
    await q(`
      CREATE TABLE event_lanes (
        subscription_id uuid NOT NULL REFERENCES event_subscriptions (id) ON DELETE CASCADE,
        lane text NOT NULL,
        pending integer NOT NULL,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        lease_owner uuid,
        leased_until timestamptz,
        PRIMARY KEY (subscription_id, lane)
      )`);
    await q(`CREATE INDEX ix_event_lanes_due ON event_lanes (next_attempt_at)`);

    // Lanes follow their deliveries: a pending delivery counts, and a lane
    // with none left goes. Upserts lock the lane row, so a lane emptied by one
    // transaction and refilled by another is never lost.
    await q(
      "\n      CREATE FUNCTION mc_event_lanes_added() RETURNS trigger LANGUAGE plpgsql AS $$\n      BEGIN\n        INSERT INTO event_lanes AS l (subscription_id, lane, pending)\n        SELECT subscription_id, lane, count(*) FROM added WHERE state = 'pending'\n        GROUP BY subscription_id, lane ORDER BY subscription_id, lane\n        ON CONFLICT (subscription_id, lane) DO UPDATE SET pending = l.pending + EXCLUDED.pending;\n        RETURN NULL;\n      END $$",
    );
    await q(
      '\n      CREATE TRIGGER tr_event_lanes_added AFTER INSERT ON event_deliveries\n      REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION mc_event_lanes_added()',
    );
    await q(
      "\n      CREATE FUNCTION mc_event_lanes_changed() RETURNS trigger LANGUAGE plpgsql AS $$\n      BEGIN\n        INSERT INTO event_lanes AS l (subscription_id, lane, pending)\n        SELECT n.subscription_id, n.lane,\n          sum((n.state = 'pending')::int - (o.state = 'pending')::int)\n        FROM after_rows n JOIN before_rows o ON o.seq = n.seq\n        GROUP BY n.subscription_id, n.lane\n        HAVING sum((n.state = 'pending')::int - (o.state = 'pending')::int) <> 0\n        ORDER BY n.subscription_id, n.lane\n        ON CONFLICT (subscription_id, lane) DO UPDATE SET pending = l.pending + EXCLUDED.pending;\n        DELETE FROM event_lanes l USING (SELECT DISTINCT subscription_id, lane FROM after_rows) c\n        WHERE l.subscription_id = c.subscription_id AND l.lane = c.lane AND l.pending <= 0;\n        RETURN NULL;\n      END $$",
    );
    await q(
      '\n      CREATE TRIGGER tr_event_lanes_changed AFTER UPDATE ON event_deliveries\n      REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows\n      FOR EACH STATEMENT EXECUTE FUNCTION mc_event_lanes_changed()',
    );

    // A pending delivery deleted (a prune racing a replay, a cascade) leaves its lane too.
    await q(
      "\n      CREATE FUNCTION mc_event_lanes_removed() RETURNS trigger LANGUAGE plpgsql AS $$\n      BEGIN\n        UPDATE event_lanes l SET pending = l.pending - c.n\n        FROM (SELECT subscription_id, lane, count(*) AS n FROM removed WHERE state = 'pending'\n              GROUP BY subscription_id, lane ORDER BY subscription_id, lane) c\n        WHERE l.subscription_id = c.subscription_id AND l.lane = c.lane;\n        DELETE FROM event_lanes l USING (SELECT DISTINCT subscription_id, lane FROM removed) c\n        WHERE l.subscription_id = c.subscription_id AND l.lane = c.lane AND l.pending <= 0;\n        RETURN NULL;\n      END $$",
    );
    await q(
      '\n      CREATE TRIGGER tr_event_lanes_removed AFTER DELETE ON event_deliveries\n      REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION mc_event_lanes_removed()',
    );

    // Each new event goes to every enabled subscription that wants it
    // (pings are addressed to one subscription by whoever writes them).
    await q(
      "\n      CREATE FUNCTION mc_events_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$\n      BEGIN\n        INSERT INTO event_deliveries (subscription_id, event_seq, lane)\n        SELECT s.id, e.seq, e.lane FROM added e\n        JOIN event_subscriptions s ON s.enabled\n          AND (s.instance_id IS NULL OR s.instance_id = e.instance_id)\n          AND e.type = ANY (s.event_types)\n        WHERE e.type <> 'ping'\n        ORDER BY e.seq, s.id;\n        RETURN NULL;\n      END $$",
    );
    await q(
      '\n      CREATE TRIGGER tr_events_fan_out AFTER INSERT ON events\n      REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION mc_events_fan_out()',
    );

    // How events show times and messages (the API's shapes).
    await q(
      '\n      CREATE FUNCTION mc_iso(t timestamptz) RETURNS text LANGUAGE sql IMMUTABLE AS $$\n        SELECT to_char(t AT TIME ZONE \'UTC\', \'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"\')\n      $$',
    );
    await q(
      "\n      CREATE FUNCTION mc_message_event(m messages, c contacts) RETURNS jsonb\n      LANGUAGE sql STABLE AS $$\n        SELECT jsonb_build_object(\n          'message', jsonb_build_object(\n            'wamid', m.wamid, 'instance_id', m.instance_id, 'direction', m.direction,\n            'contact', m.contact, 'wa_id', c.wa_id, 'user_id', c.user_id, 'type', m.type,\n            'status', m.status, 'errors', m.errors, 'content', m.body,\n            'created_at', mc_iso(m.created_at), 'updated_at', mc_iso(m.updated_at)),\n          'contact', jsonb_build_object(\n            'wa_id', COALESCE(c.wa_id, CASE WHEN m.contact ~ '^[0-9]+$' THEN m.contact END),\n            'user_id', c.user_id, 'name', c.name, 'username', c.username))\n      $$",
    );
    await q(
      "\n      CREATE FUNCTION mc_message_lane(m messages) RETURNS text LANGUAGE sql IMMUTABLE AS $$\n        SELECT 'contact:' || COALESCE(m.contact_id::text, m.instance_id::text || ':' || m.contact)\n      $$",
    );

    // messages: a new inbound message, a send recorded, a status (first seen
    // on a placeholder, or moved forward), a placeholder completed by its send.
    await q(MESSAGES_INSERTED);
    await q(
      '\n      CREATE TRIGGER tr_messages_inserted AFTER INSERT ON messages\n      REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION mc_messages_inserted()',
    );
    await q(MESSAGE_UPDATED);
    await q(
      "\n      CREATE TRIGGER tr_message_updated AFTER UPDATE OF status, type ON messages FOR EACH ROW\n      WHEN (OLD.status IS DISTINCT FROM NEW.status OR (OLD.type = 'unknown' AND NEW.type <> 'unknown'))\n      EXECUTE FUNCTION mc_message_updated()",
    );

    // template_events: one event per active instance of the business account.
    await q(
      "\n      CREATE FUNCTION mc_template_event_added() RETURNS trigger LANGUAGE plpgsql AS $$\n      BEGIN\n        INSERT INTO events (type, instance_id, lane, data)\n        SELECT 'template.status', i.id, 'template:' || NEW.template_id,\n          jsonb_build_object(\n            'template_id', NEW.template_id, 'name', NEW.template_name,\n            'language', NEW.template_language, 'status', NEW.event, 'reason', NEW.reason,\n            'channel_account_id', NEW.channel_account_id, 'at', mc_iso(NEW.event_at))\n        FROM instances i WHERE i.channel_account_id = NEW.channel_account_id AND i.is_active\n        ORDER BY i.id;\n        RETURN NULL;\n      END $$",
    );
    await q(
      '\n      CREATE TRIGGER tr_template_event_added AFTER INSERT ON template_events FOR EACH ROW\n      EXECUTE FUNCTION mc_template_event_added()',
    );

    // turns: a dead letter.
    await q(
      "\n      CREATE FUNCTION mc_turn_failed() RETURNS trigger LANGUAGE plpgsql AS $$\n      BEGIN\n        INSERT INTO events (type, instance_id, lane, data)\n        SELECT 'turn.failed', NEW.instance_id, 'contact:' || NEW.contact_id,\n          jsonb_build_object(\n            'turn_id', NEW.id, 'error', NEW.last_error, 'attempts', NEW.attempts,\n            'created_at', mc_iso(NEW.created_at),\n            'contact', jsonb_build_object('wa_id', c.wa_id, 'user_id', c.user_id, 'name', c.name))\n        FROM contacts c WHERE c.id = NEW.contact_id;\n        RETURN NULL;\n      END $$",
    );
    await q(
      "\n      CREATE TRIGGER tr_turn_failed AFTER UPDATE OF status ON turns FOR EACH ROW\n      WHEN (NEW.status = 'failed' AND OLD.status IS DISTINCT FROM 'failed')\n      EXECUTE FUNCTION mc_turn_failed()",
    );

    // instances: activated, deactivated, token rejected by the platform.
    await q(
      "\n      CREATE FUNCTION mc_instance_status() RETURNS trigger LANGUAGE plpgsql AS $$\n      DECLARE\n        status text;\n      BEGIN\n        IF TG_OP = 'INSERT' THEN\n          status := CASE WHEN NEW.is_active THEN 'activated' ELSE 'deactivated' END;\n        ELSIF NEW.token_rejected_at IS NOT NULL AND OLD.token_rejected_at IS NULL THEN\n          status := 'token_rejected';\n        ELSIF NEW.is_active IS DISTINCT FROM OLD.is_active THEN\n          status := CASE WHEN NEW.is_active THEN 'activated' ELSE 'deactivated' END;\n        ELSE\n          RETURN NULL;\n        END IF;\n        INSERT INTO events (type, instance_id, lane, data)\n        VALUES ('instance.status', NEW.id, 'instance:' || NEW.id, jsonb_build_object(\n          'status', status, 'name', NEW.name, 'phone_number_id', NEW.phone_number_id,\n          'display_phone_number', NEW.display_phone_number, 'is_active', NEW.is_active,\n          'token_rejected_at', mc_iso(NEW.token_rejected_at)));\n        RETURN NULL;\n      END $$",
    );
    await q(
      '\n      CREATE TRIGGER tr_instance_status AFTER INSERT OR UPDATE OF is_active, token_rejected_at\n      ON instances FOR EACH ROW EXECUTE FUNCTION mc_instance_status()',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const q = (sql: string) => queryRunner.query(sql);
    await q(`DROP TRIGGER tr_instance_status ON instances`);
    await q(`DROP TRIGGER tr_turn_failed ON turns`);
    await q(`DROP TRIGGER tr_template_event_added ON template_events`);
    await q(`DROP TRIGGER tr_message_updated ON messages`);
    await q(`DROP TRIGGER tr_messages_inserted ON messages`);
    await q(`DROP TABLE event_lanes, event_deliveries, event_subscriptions, events`);
    await q(`DROP FUNCTION mc_instance_status(), mc_turn_failed(), mc_template_event_added(),
             mc_message_updated(), mc_messages_inserted(), mc_message_lane(messages),
             mc_message_event(messages, contacts), mc_iso(timestamptz), mc_events_fan_out(),
             mc_event_lanes_changed(), mc_event_lanes_added(), mc_event_lanes_removed()`);
    await q(`ALTER TABLE instances DROP COLUMN token_rejected_at`);
    await q(`ALTER TABLE messages DROP COLUMN sent_by`);
  }
}
