import { LANE_ORDER } from '../database/lock-order.js';
import { sqlFunction, sqlTrigger, type SqlObject } from '../database/sql-objects.js';

/**
 * The event outbox's own SQL: which events are wanted, their fan-out to the
 * subscriptions (`event_deliveries`) and the per-lane pending counters
 * (`event_lanes`) the dispatcher leases. The events themselves are written by
 * the triggers of the tables they report on (messages, contacts, turns,
 * templates, instances), in the change's transaction.
 */
export const EVENT_SQL: SqlObject[] = [
  sqlFunction(
    'mc_iso',
    `
CREATE OR REPLACE FUNCTION mc_iso(t timestamptz) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$`,
  ),

  // Whether a subscription, enabled or not (a disabled one may be replayed), wants the type.
  sqlFunction(
    'mc_event_wanted',
    `
CREATE OR REPLACE FUNCTION mc_event_wanted(instance uuid, event_type text) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM event_subscriptions s
                 WHERE (s.instance_id IS NULL OR s.instance_id = $1)
                   AND $2 = ANY (s.event_types))
$$`,
  ),

  // The rare writers (template, turn, instance, handoff) are filtered here; the message
  // triggers (the hot path) test the same as a join before building an event (a call of
  // this function per row cost as much as the event's JSON).
  sqlFunction(
    'mc_event_unwanted',
    `
CREATE OR REPLACE FUNCTION mc_event_unwanted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF mc_event_wanted(NEW.instance_id, NEW.type) THEN
    RETURN NEW;
  END IF;
  RETURN NULL;
END $$`,
  ),
  sqlTrigger(
    'tr_event_unwanted',
    'events',
    `
CREATE TRIGGER tr_event_unwanted BEFORE INSERT ON events
FOR EACH ROW WHEN (NEW.type <> 'ping' AND NEW.type NOT LIKE 'message.%')
EXECUTE FUNCTION mc_event_unwanted()`,
  ),

  // One delivery per enabled subscription that wants the event (a ping is addressed to one).
  // The subscriptions are locked as they are read (the key share their foreign keys take
  // anyway): one an admin deletes meanwhile is then left out, not a foreign-key error that
  // fails the whole batch, and it is locked before its lanes (database/lock-order.ts).
  sqlFunction(
    'mc_events_fan_out',
    `
CREATE OR REPLACE FUNCTION mc_events_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_deliveries (subscription_id, event_seq, lane)
  SELECT s.id, e.seq, e.lane FROM added e
  JOIN event_subscriptions s ON s.enabled
    AND (s.instance_id IS NULL OR s.instance_id = e.instance_id)
    AND e.type = ANY (s.event_types)
  WHERE e.type <> 'ping'
  ORDER BY e.seq, s.id
  FOR KEY SHARE OF s;
  RETURN NULL;
END $$`,
  ),
  sqlTrigger(
    'tr_events_fan_out',
    'events',
    `
CREATE TRIGGER tr_events_fan_out AFTER INSERT ON events
REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION mc_events_fan_out()`,
  ),

  // The lane counters: each statement's lanes in the lock order (database/lock-order.ts).
  sqlFunction(
    'mc_event_lanes_added',
    `
CREATE OR REPLACE FUNCTION mc_event_lanes_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_lanes AS l (subscription_id, lane, pending)
  SELECT subscription_id, lane, count(*) FROM added WHERE state = 'pending'
  GROUP BY subscription_id, lane ORDER BY ${LANE_ORDER}
  ON CONFLICT (subscription_id, lane) DO UPDATE SET pending = l.pending + EXCLUDED.pending;
  RETURN NULL;
END $$`,
  ),
  sqlTrigger(
    'tr_event_lanes_added',
    'event_deliveries',
    `
CREATE TRIGGER tr_event_lanes_added AFTER INSERT ON event_deliveries
REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION mc_event_lanes_added()`,
  ),
  sqlFunction(
    'mc_event_lanes_changed',
    `
CREATE OR REPLACE FUNCTION mc_event_lanes_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_lanes AS l (subscription_id, lane, pending)
  SELECT n.subscription_id, n.lane,
    sum((n.state = 'pending')::int - (o.state = 'pending')::int)
  FROM after_rows n JOIN before_rows o ON o.seq = n.seq
  GROUP BY n.subscription_id, n.lane
  HAVING sum((n.state = 'pending')::int - (o.state = 'pending')::int) <> 0
  ORDER BY ${LANE_ORDER}
  ON CONFLICT (subscription_id, lane) DO UPDATE SET pending = l.pending + EXCLUDED.pending;
  DELETE FROM event_lanes l USING (SELECT DISTINCT subscription_id, lane FROM after_rows) c
  WHERE l.subscription_id = c.subscription_id AND l.lane = c.lane AND l.pending <= 0;
  RETURN NULL;
END $$`,
  ),
  sqlTrigger(
    'tr_event_lanes_changed',
    'event_deliveries',
    `
CREATE TRIGGER tr_event_lanes_changed AFTER UPDATE ON event_deliveries
REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
FOR EACH STATEMENT EXECUTE FUNCTION mc_event_lanes_changed()`,
  ),
  sqlFunction(
    'mc_event_lanes_removed',
    `
CREATE OR REPLACE FUNCTION mc_event_lanes_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE event_lanes l SET pending = l.pending - c.n
  FROM (SELECT subscription_id, lane, count(*) AS n FROM removed WHERE state = 'pending'
        GROUP BY subscription_id, lane ORDER BY ${LANE_ORDER}) c
  WHERE l.subscription_id = c.subscription_id AND l.lane = c.lane;
  DELETE FROM event_lanes l USING (SELECT DISTINCT subscription_id, lane FROM removed) c
  WHERE l.subscription_id = c.subscription_id AND l.lane = c.lane AND l.pending <= 0;
  RETURN NULL;
END $$`,
  ),
  sqlTrigger(
    'tr_event_lanes_removed',
    'event_deliveries',
    `
CREATE TRIGGER tr_event_lanes_removed AFTER DELETE ON event_deliveries
REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION mc_event_lanes_removed()`,
  ),
];
