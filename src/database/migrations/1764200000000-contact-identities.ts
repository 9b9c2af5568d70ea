import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A contact is a person on one instance, known by its phone number (wa_id),
 * its business-scoped user id, or both; either may be missing and either may
 * change. Contacts get their own id, which messages and turns now point at,
 * and SQL functions keep the identities straight (each described below):
 * mc_resolve_contact finds, links, merges or creates the contact of an
 * identity; mc_rekey_contact applies a number or user-id change.
 */
export class ContactIdentities1764200000000 implements MigrationInterface {
  name = 'ContactIdentities1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE contacts
        ADD COLUMN id uuid NOT NULL DEFAULT gen_random_uuid(),
        ADD COLUMN parent_user_id varchar(128),
        ADD COLUMN username varchar(256),
        ADD COLUMN previous_wa_ids text[] NOT NULL DEFAULT '{}',
        ADD COLUMN previous_user_ids text[] NOT NULL DEFAULT '{}'`);
    await queryRunner.query(`ALTER TABLE contacts DROP CONSTRAINT contacts_pkey`);
    await queryRunner.query(`ALTER TABLE contacts ADD PRIMARY KEY (id)`);
    await queryRunner.query(`ALTER TABLE contacts ALTER COLUMN wa_id DROP NOT NULL`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX ux_contacts_wa_id ON contacts (instance_id, wa_id) WHERE wa_id IS NOT NULL`,
    );
    // A user id seen on two numbers before it was a key: the most recent keeps it.
    await queryRunner.query(`
      UPDATE contacts c SET user_id = NULL
      WHERE user_id IS NOT NULL AND EXISTS (
        SELECT 1 FROM contacts o WHERE o.instance_id = c.instance_id AND o.user_id = c.user_id
          AND (o.updated_at, o.id) > (c.updated_at, c.id))`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX ux_contacts_user_id ON contacts (instance_id, user_id) WHERE user_id IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX ix_contacts_parent_user_id ON contacts (instance_id, parent_user_id)
       WHERE parent_user_id IS NOT NULL`,
    );
    // Numbers only ever sent to become contacts too, so every message has one.
    await queryRunner.query(`
      INSERT INTO contacts (instance_id, wa_id)
      SELECT DISTINCT m.instance_id, m.contact FROM messages m
      WHERE m.contact ~ '^[0-9]{1,32}$'
      ON CONFLICT DO NOTHING`);

    // The address a message came from or went to: a number, or a user id (up to 128).
    await queryRunner.query(`ALTER TABLE messages ALTER COLUMN contact TYPE varchar(128)`);
    await queryRunner.query(
      `ALTER TABLE messages ADD COLUMN contact_id uuid REFERENCES contacts (id)`,
    );
    await queryRunner.query(`
      UPDATE messages m SET contact_id = c.id FROM contacts c
      WHERE c.instance_id = m.instance_id AND c.wa_id = m.contact`);
    await queryRunner.query(`DROP INDEX ix_messages_instance_contact`);
    await queryRunner.query(
      `CREATE INDEX ix_messages_contact ON messages (contact_id, created_at) WHERE contact_id IS NOT NULL`,
    );
    await queryRunner.query(`DROP INDEX ix_messages_awaiting`);
    await queryRunner.query(
      `CREATE INDEX ix_messages_awaiting ON messages (contact_id, received_at) WHERE awaiting_turn`,
    );

    await queryRunner.query(
      `ALTER TABLE turns ADD COLUMN contact_id uuid REFERENCES contacts (id) ON DELETE CASCADE`,
    );
    await queryRunner.query(`
      UPDATE turns t SET contact_id = c.id FROM contacts c
      WHERE c.instance_id = t.instance_id AND c.wa_id = t.contact`);
    await queryRunner.query(`DELETE FROM turns WHERE contact_id IS NULL`);
    await queryRunner.query(`ALTER TABLE turns ALTER COLUMN contact_id SET NOT NULL`);
    await queryRunner.query(`DROP INDEX ux_turns_open_contact`);
    await queryRunner.query(`DROP INDEX ix_turns_contact_created`);
    await queryRunner.query(`ALTER TABLE turns DROP COLUMN contact`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX ux_turns_open_contact ON turns (contact_id)
       WHERE status IN ('claimed', 'calling', 'answered', 'sending')`,
    );
    await queryRunner.query(
      `CREATE INDEX ix_turns_contact_created ON turns (contact_id, created_at DESC)`,
    );

    await queryRunner.query(MERGE_CONTACTS);
    await queryRunner.query(RESOLVE_CONTACT);
    await queryRunner.query(REKEY_CONTACT);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION mc_rekey_contact`);
    await queryRunner.query(`DROP FUNCTION mc_resolve_contact`);
    await queryRunner.query(`DROP FUNCTION mc_merge_contacts`);
    await queryRunner.query(`DROP INDEX ix_turns_contact_created`);
    await queryRunner.query(`DROP INDEX ux_turns_open_contact`);
    await queryRunner.query(`ALTER TABLE turns ADD COLUMN contact varchar(32)`);
    await queryRunner.query(
      `UPDATE turns t SET contact = COALESCE(c.wa_id, c.user_id) FROM contacts c WHERE c.id = t.contact_id`,
    );
    await queryRunner.query(`ALTER TABLE turns DROP COLUMN contact_id`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX ux_turns_open_contact ON turns (instance_id, contact)
       WHERE status IN ('claimed', 'calling', 'answered', 'sending')`,
    );
    await queryRunner.query(
      `CREATE INDEX ix_turns_contact_created ON turns (instance_id, contact, created_at DESC)`,
    );
    await queryRunner.query(`DROP INDEX ix_messages_awaiting`);
    await queryRunner.query(
      `CREATE INDEX ix_messages_awaiting ON messages (instance_id, contact, received_at) WHERE awaiting_turn`,
    );
    await queryRunner.query(`DROP INDEX ix_messages_contact`);
    await queryRunner.query(
      `CREATE INDEX ix_messages_instance_contact ON messages (instance_id, contact, created_at)`,
    );
    await queryRunner.query(`ALTER TABLE messages DROP COLUMN contact_id`);
    await queryRunner.query(`DROP INDEX ix_contacts_parent_user_id`);
    await queryRunner.query(`DROP INDEX ux_contacts_user_id`);
    await queryRunner.query(`DROP INDEX ux_contacts_wa_id`);
    await queryRunner.query(`DELETE FROM contacts WHERE wa_id IS NULL`);
    await queryRunner.query(`ALTER TABLE contacts DROP CONSTRAINT contacts_pkey`);
    await queryRunner.query(`ALTER TABLE contacts ADD PRIMARY KEY (instance_id, wa_id)`);
    await queryRunner.query(`
      ALTER TABLE contacts DROP COLUMN id, DROP COLUMN parent_user_id, DROP COLUMN username,
        DROP COLUMN previous_wa_ids, DROP COLUMN previous_user_ids`);
  }
}

/**
 * Moves everything of `loser` onto `survivor` (the same person, known under
 * two rows) and deletes `loser`; false, changing nothing, when both have an
 * open turn (the merge waits until one has ended).
 */
const MERGE_CONTACTS =
  "\nCREATE FUNCTION mc_merge_contacts(loser uuid, survivor uuid) RETURNS boolean\nLANGUAGE plpgsql AS $$\nDECLARE\n  gone contacts%ROWTYPE;\nBEGIN\n  IF (SELECT count(DISTINCT contact_id) FROM turns\n      WHERE contact_id IN (loser, survivor)\n        AND status IN ('claimed', 'calling', 'answered', 'sending')) > 1 THEN\n    RETURN false;\n  END IF;\n  UPDATE messages SET contact_id = survivor WHERE contact_id = loser;\n  UPDATE turns SET contact_id = survivor WHERE contact_id = loser;\n  DELETE FROM contacts WHERE id = loser RETURNING * INTO gone;\n  UPDATE contacts SET\n    wa_id = COALESCE(wa_id, gone.wa_id),\n    user_id = COALESCE(user_id, gone.user_id),\n    parent_user_id = COALESCE(parent_user_id, gone.parent_user_id),\n    username = COALESCE(username, gone.username),\n    name = COALESCE(name, gone.name),\n    last_inbound_at = GREATEST(last_inbound_at, gone.last_inbound_at),\n    previous_wa_ids = previous_wa_ids || gone.previous_wa_ids,\n    previous_user_ids = previous_user_ids || gone.previous_user_ids,\n    created_at = LEAST(created_at, gone.created_at),\n    updated_at = now()\n  WHERE id = survivor;\n  RETURN true;\nEND $$";

/**
 * The contact of an identity seen on the instance (a message's sender, or a
 * send's recipient), created when new. The user id identifies a person when
 * present; the number too when known:
 * - both keys on one row, or one key and the other unknown: that row (the
 *   missing key is linked to it);
 * - the user id on one row and the number on another that has no user id:
 *   the same person seen before by number only, merged into one;
 * - the number on a row with another user id: the number changed hands, it
 *   leaves that row.
 * Name, username and the last inbound time (it opens the service window,
 * and only moves forward) are updated. Linking takes a per-instance advisory
 * lock, so two sessions do not link the same keys at once.
 */
const RESOLVE_CONTACT =
  "\nCREATE FUNCTION mc_resolve_contact(\n  p_instance uuid, p_wa_id text, p_user_id text, p_parent_user_id text,\n  p_username text, p_name text, p_inbound_at timestamptz\n) RETURNS uuid\nLANGUAGE plpgsql AS $$\nDECLARE\n  by_user contacts%ROWTYPE;\n  by_wa contacts%ROWTYPE;\n  found uuid;\n  locked boolean := false;\nBEGIN\n  IF p_wa_id IS NULL AND p_user_id IS NULL THEN\n    RETURN NULL;\n  END IF;\n  FOR attempt IN 1..5 LOOP\n    by_user := NULL;\n    by_wa := NULL;\n    IF p_user_id IS NOT NULL THEN\n      SELECT * INTO by_user FROM contacts WHERE instance_id = p_instance AND user_id = p_user_id;\n    END IF;\n    IF p_wa_id IS NOT NULL THEN\n      SELECT * INTO by_wa FROM contacts WHERE instance_id = p_instance AND wa_id = p_wa_id;\n    END IF;\n\n    IF by_user.id IS NOT NULL AND (p_wa_id IS NULL OR by_user.wa_id = p_wa_id) THEN\n      found := by_user.id;\n    ELSIF by_user.id IS NULL AND by_wa.id IS NOT NULL\n        AND (p_user_id IS NULL OR by_wa.user_id IS NULL) AND locked THEN\n      found := by_wa.id;\n    ELSIF by_user.id IS NULL AND by_wa.id IS NOT NULL AND p_user_id IS NULL THEN\n      found := by_wa.id;\n    ELSIF by_user.id IS NULL AND by_wa.id IS NULL THEN\n      INSERT INTO contacts (instance_id, wa_id, user_id, parent_user_id, username, name, last_inbound_at)\n      VALUES (p_instance, p_wa_id, p_user_id, p_parent_user_id, p_username, p_name, p_inbound_at)\n      ON CONFLICT DO NOTHING\n      RETURNING id INTO found;\n      IF found IS NOT NULL THEN\n        RETURN found;\n      END IF;\n      CONTINUE; -- created meanwhile by another session: look again\n    ELSIF NOT locked THEN\n      -- Keys to link, merge or move: one session at a time per instance, then look again.\n      PERFORM pg_advisory_xact_lock(hashtextextended('mc-contacts:' || p_instance::text, 0));\n      locked := true;\n      CONTINUE;\n    ELSIF by_user.id IS NOT NULL THEN\n      found := by_user.id;\n      IF by_wa.id IS NOT NULL AND by_wa.id <> by_user.id THEN\n        IF by_wa.user_id IS NULL THEN\n          IF NOT mc_merge_contacts(by_wa.id, by_user.id) THEN\n            RETURN found; -- both busy: linked on a later message\n          END IF;\n        ELSE\n          UPDATE contacts SET wa_id = NULL, previous_wa_ids = array_append(previous_wa_ids, wa_id),\n            updated_at = now()\n          WHERE id = by_wa.id;\n        END IF;\n      END IF;\n    ELSE\n      -- The number is on a row with another user id: it changed hands.\n      UPDATE contacts SET wa_id = NULL, previous_wa_ids = array_append(previous_wa_ids, wa_id),\n        updated_at = now()\n      WHERE id = by_wa.id;\n      CONTINUE;\n    END IF;\n\n    UPDATE contacts SET\n      previous_wa_ids = CASE WHEN p_wa_id IS NOT NULL AND wa_id IS NOT NULL AND wa_id <> p_wa_id\n        THEN array_append(previous_wa_ids, wa_id) ELSE previous_wa_ids END,\n      wa_id = COALESCE(p_wa_id, wa_id),\n      user_id = COALESCE(p_user_id, user_id),\n      parent_user_id = COALESCE(p_parent_user_id, parent_user_id),\n      username = COALESCE(p_username, username),\n      name = COALESCE(p_name, name),\n      last_inbound_at = GREATEST(last_inbound_at, p_inbound_at),\n      updated_at = now()\n    WHERE id = found\n      AND (p_wa_id IS DISTINCT FROM NULL AND wa_id IS DISTINCT FROM p_wa_id\n        OR p_user_id IS DISTINCT FROM NULL AND user_id IS DISTINCT FROM p_user_id\n        OR p_parent_user_id IS DISTINCT FROM NULL AND parent_user_id IS DISTINCT FROM p_parent_user_id\n        OR p_username IS DISTINCT FROM NULL AND username IS DISTINCT FROM p_username\n        OR p_name IS DISTINCT FROM NULL AND name IS DISTINCT FROM p_name\n        OR p_inbound_at > COALESCE(last_inbound_at, '-infinity'));\n    RETURN found;\n  END LOOP;\n  RAISE EXCEPTION 'contact for % / % could not be resolved', p_wa_id, p_user_id;\nEND $$";

/**
 * Applies an identity change the platform announced (a system message): the
 * contact known by the old number or old user id takes the new ones, keeping
 * its history and remembering the old keys. A row already holding a new key
 * is merged in. Returns the contact, or null when the old keys are unknown.
 */
const REKEY_CONTACT =
  "\nCREATE FUNCTION mc_rekey_contact(\n  p_instance uuid, p_old_wa_id text, p_old_user_id text,\n  p_new_wa_id text, p_new_user_id text, p_new_parent_user_id text\n) RETURNS uuid\nLANGUAGE plpgsql AS $$\nDECLARE\n  target contacts%ROWTYPE;\n  holder uuid;\nBEGIN\n  PERFORM pg_advisory_xact_lock(hashtextextended('mc-contacts:' || p_instance::text, 0));\n  SELECT * INTO target FROM contacts\n  WHERE instance_id = p_instance\n    AND ((p_old_user_id IS NOT NULL AND user_id = p_old_user_id)\n      OR (p_old_wa_id IS NOT NULL AND wa_id = p_old_wa_id))\n  ORDER BY (user_id IS NOT DISTINCT FROM p_old_user_id) DESC\n  LIMIT 1;\n  IF target.id IS NULL THEN\n    RETURN NULL;\n  END IF;\n  SELECT id INTO holder FROM contacts\n  WHERE instance_id = p_instance AND id <> target.id\n    AND ((p_new_user_id IS NOT NULL AND user_id = p_new_user_id)\n      OR (p_new_wa_id IS NOT NULL AND wa_id = p_new_wa_id))\n  LIMIT 1;\n  IF holder IS NOT NULL AND NOT mc_merge_contacts(holder, target.id) THEN\n    RETURN target.id; -- both busy: the change is applied on a later message\n  END IF;\n  UPDATE contacts SET\n    previous_wa_ids = CASE WHEN p_new_wa_id IS NOT NULL AND wa_id IS NOT NULL AND wa_id <> p_new_wa_id\n      THEN array_append(previous_wa_ids, wa_id) ELSE previous_wa_ids END,\n    previous_user_ids = CASE WHEN p_new_user_id IS NOT NULL AND user_id IS NOT NULL AND user_id <> p_new_user_id\n      THEN array_append(previous_user_ids, user_id) ELSE previous_user_ids END,\n    wa_id = COALESCE(p_new_wa_id, wa_id),\n    user_id = COALESCE(p_new_user_id, user_id),\n    parent_user_id = COALESCE(p_new_parent_user_id, parent_user_id),\n    updated_at = now()\n  WHERE id = target.id;\n  RETURN target.id;\nEND $$";
