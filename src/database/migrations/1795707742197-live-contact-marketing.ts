import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * a contact's marketing opt-out or phone-book name changing reaches the live streams
 * (the inbox shows both)
 *
 * Written by `npm run sql:migration` from the current definitions (src/schema.ts):
 * - function mc_contacts_live(): changed
 */
export class LiveContactMarketing1795707742197 implements MigrationInterface {
  name = 'LiveContactMarketing1795707742197';

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
  "CREATE OR REPLACE FUNCTION mc_contacts_live() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n  IF EXISTS (SELECT 1 FROM live_listeners) THEN\n    PERFORM mc_live_notify('contact', array_agg(n.instance_id ORDER BY n.id),\n      array_agg(n.id ORDER BY n.id))\n    FROM after_rows n JOIN before_rows o ON o.id = n.id\n    WHERE o.handoff_until IS DISTINCT FROM n.handoff_until\n       OR o.handoff_by IS DISTINCT FROM n.handoff_by\n       OR o.handoff_account_name IS DISTINCT FROM n.handoff_account_name\n       OR o.opted_out_at IS DISTINCT FROM n.opted_out_at OR o.name IS DISTINCT FROM n.name\n       OR o.marketing_opted_out_at IS DISTINCT FROM n.marketing_opted_out_at\n       OR o.phone_name IS DISTINCT FROM n.phone_name\n       OR o.wa_id IS DISTINCT FROM n.wa_id OR o.user_id IS DISTINCT FROM n.user_id\n       OR o.read_seq IS DISTINCT FROM n.read_seq;\n  END IF;\n  RETURN NULL;\nEND $$",
];

const DOWN = [
  'SET LOCAL check_function_bodies = off',
  "SET LOCAL lock_timeout = '5s'",
  "CREATE OR REPLACE FUNCTION mc_contacts_live()\n RETURNS trigger\n LANGUAGE plpgsql\nAS $function$\nBEGIN\n  IF EXISTS (SELECT 1 FROM live_listeners) THEN\n    PERFORM mc_live_notify('contact', array_agg(n.instance_id ORDER BY n.id),\n      array_agg(n.id ORDER BY n.id))\n    FROM after_rows n JOIN before_rows o ON o.id = n.id\n    WHERE o.handoff_until IS DISTINCT FROM n.handoff_until\n       OR o.handoff_by IS DISTINCT FROM n.handoff_by\n       OR o.handoff_account_name IS DISTINCT FROM n.handoff_account_name\n       OR o.opted_out_at IS DISTINCT FROM n.opted_out_at OR o.name IS DISTINCT FROM n.name\n       OR o.wa_id IS DISTINCT FROM n.wa_id OR o.user_id IS DISTINCT FROM n.user_id\n       OR o.read_seq IS DISTINCT FROM n.read_seq;\n  END IF;\n  RETURN NULL;\nEND $function$\n",
];
