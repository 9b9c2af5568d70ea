import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A conversation shows a failed turn live: the turn's messages are told to the live
 * streams when it fails and when a retry takes it up
 *
 * Written by `npm run sql:migration` from the current definitions (src/schema.ts):
 * - function mc_turn_live(): added
 * - trigger tr_turn_live on turns: added
 */
export class TurnLive1795677029198 implements MigrationInterface {
  name = 'TurnLive1795677029198';

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
  'DROP TRIGGER IF EXISTS tr_turn_live ON turns',
  "CREATE OR REPLACE FUNCTION mc_turn_live() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n  PERFORM mc_live_notify('message', array_agg(m.instance_id), array_agg(m.id))\n  FROM messages m WHERE m.turn_id = NEW.id;\n  RETURN NULL;\nEND $$",
  "CREATE TRIGGER tr_turn_live AFTER UPDATE OF status ON turns\nFOR EACH ROW WHEN ((NEW.status = 'failed') IS DISTINCT FROM (OLD.status = 'failed'))\nEXECUTE FUNCTION mc_turn_live()",
];

const DOWN = [
  'SET LOCAL check_function_bodies = off',
  "SET LOCAL lock_timeout = '5s'",
  'DROP TRIGGER IF EXISTS tr_turn_live ON turns',
  'DROP FUNCTION mc_turn_live()',
];
