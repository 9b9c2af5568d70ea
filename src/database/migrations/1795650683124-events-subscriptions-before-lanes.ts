import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The events' fan-out locks the subscriptions it reads (KEY SHARE), so a subscription
 * deleted meanwhile is left out instead of failing the batch on its foreign key, and the
 * subscription comes before its lanes in the lock order.
 *
 * Written by `npm run sql:migration` from the current definitions (src/schema.ts):
 * - function mc_events_fan_out(): changed
 */
export class EventsSubscriptionsBeforeLanes1795650683124 implements MigrationInterface {
  name = 'EventsSubscriptionsBeforeLanes1795650683124';

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
  "CREATE OR REPLACE FUNCTION mc_events_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n  INSERT INTO event_deliveries (subscription_id, event_seq, lane)\n  SELECT s.id, e.seq, e.lane FROM added e\n  JOIN event_subscriptions s ON s.enabled\n    AND (s.instance_id IS NULL OR s.instance_id = e.instance_id)\n    AND e.type = ANY (s.event_types)\n  WHERE e.type <> 'ping'\n  ORDER BY e.seq, s.id\n  FOR KEY SHARE OF s;\n  RETURN NULL;\nEND $$",
];

const DOWN = [
  'SET LOCAL check_function_bodies = off',
  "SET LOCAL lock_timeout = '5s'",
  "CREATE OR REPLACE FUNCTION mc_events_fan_out()\n RETURNS trigger\n LANGUAGE plpgsql\nAS $function$\nBEGIN\n  INSERT INTO event_deliveries (subscription_id, event_seq, lane)\n  SELECT s.id, e.seq, e.lane FROM added e\n  JOIN event_subscriptions s ON s.enabled\n    AND (s.instance_id IS NULL OR s.instance_id = e.instance_id)\n    AND e.type = ANY (s.event_types)\n  WHERE e.type <> 'ping'\n  ORDER BY e.seq, s.id;\n  RETURN NULL;\nEND $function$\n",
];
