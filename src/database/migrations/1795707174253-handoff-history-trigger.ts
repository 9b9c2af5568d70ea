import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * a pause begun, changed or ended writes the contact's handoff history
 * (contact_handoffs), in the statement that writes its contact.handoff event
 *
 * Written by `npm run sql:migration` from the current definitions (src/schema.ts):
 * - function mc_contacts_handoff(): changed
 */
export class HandoffHistoryTrigger1795707174253 implements MigrationInterface {
  name = 'HandoffHistoryTrigger1795707174253';

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
  "CREATE OR REPLACE FUNCTION mc_contacts_handoff() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n  INSERT INTO events (type, instance_id, lane, data)\n  SELECT 'contact.handoff', n.instance_id, 'contact:' || n.id, jsonb_build_object(\n    'paused', n.handoff_until IS NOT NULL AND n.handoff_until > now(),\n    'until', mc_iso(n.handoff_until), 'since', mc_iso(n.handoff_since),\n    'reason', n.handoff_reason, 'by', n.handoff_by,\n    'account', CASE WHEN n.handoff_account_name IS NOT NULL THEN jsonb_build_object(\n      'id', n.handoff_account_id, 'display_name', n.handoff_account_name) END,\n    'contact', jsonb_build_object('wa_id', n.wa_id, 'user_id', n.user_id, 'name', n.name))\n  FROM after_rows n JOIN before_rows o ON o.id = n.id\n  WHERE o.handoff_until IS DISTINCT FROM n.handoff_until OR o.handoff_by IS DISTINCT FROM n.handoff_by\n     OR o.handoff_account_name IS DISTINCT FROM n.handoff_account_name\n  ORDER BY n.id;\n  -- The history: a pause begun or changed is its row (by its start); one ended says so.\n  INSERT INTO contact_handoffs AS h (contact_id, since, until, by, reason, account_name)\n  SELECT n.id, n.handoff_since, n.handoff_until, n.handoff_by, n.handoff_reason,\n    n.handoff_account_name\n  FROM after_rows n JOIN before_rows o ON o.id = n.id\n  WHERE n.handoff_until IS NOT NULL AND n.handoff_since IS NOT NULL\n    AND (o.handoff_until IS DISTINCT FROM n.handoff_until OR o.handoff_by IS DISTINCT FROM n.handoff_by\n         OR o.handoff_account_name IS DISTINCT FROM n.handoff_account_name)\n  ORDER BY n.id\n  ON CONFLICT (contact_id, since) DO UPDATE SET until = EXCLUDED.until, by = EXCLUDED.by,\n    reason = EXCLUDED.reason, account_name = EXCLUDED.account_name, ended_at = NULL,\n    ended_by = NULL;\n  UPDATE contact_handoffs h SET ended_at = now(), ended_by = n.handoff_by\n  FROM after_rows n JOIN before_rows o ON o.id = n.id\n  WHERE h.contact_id = n.id AND h.since = o.handoff_since\n    AND o.handoff_until IS NOT NULL AND n.handoff_until IS NULL;\n  RETURN NULL;\nEND $$",
];

const DOWN = [
  'SET LOCAL check_function_bodies = off',
  "SET LOCAL lock_timeout = '5s'",
  "CREATE OR REPLACE FUNCTION mc_contacts_handoff()\n RETURNS trigger\n LANGUAGE plpgsql\nAS $function$\nBEGIN\n  INSERT INTO events (type, instance_id, lane, data)\n  SELECT 'contact.handoff', n.instance_id, 'contact:' || n.id, jsonb_build_object(\n    'paused', n.handoff_until IS NOT NULL AND n.handoff_until > now(),\n    'until', mc_iso(n.handoff_until), 'since', mc_iso(n.handoff_since),\n    'reason', n.handoff_reason, 'by', n.handoff_by,\n    'account', CASE WHEN n.handoff_account_name IS NOT NULL THEN jsonb_build_object(\n      'id', n.handoff_account_id, 'display_name', n.handoff_account_name) END,\n    'contact', jsonb_build_object('wa_id', n.wa_id, 'user_id', n.user_id, 'name', n.name))\n  FROM after_rows n JOIN before_rows o ON o.id = n.id\n  WHERE o.handoff_until IS DISTINCT FROM n.handoff_until OR o.handoff_by IS DISTINCT FROM n.handoff_by\n     OR o.handoff_account_name IS DISTINCT FROM n.handoff_account_name\n  ORDER BY n.id;\n  RETURN NULL;\nEND $function$\n",
];
