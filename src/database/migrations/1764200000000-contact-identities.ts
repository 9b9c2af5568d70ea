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
const MERGE_CONTACTS = `
CREATE FUNCTION mc_merge_contacts(loser uuid, survivor uuid) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  gone contacts%ROWTYPE;
BEGIN
  IF (SELECT count(DISTINCT contact_id) FROM turns
      WHERE contact_id IN (loser, survivor)
        AND status IN ('claimed', 'calling', 'answered', 'sending')) > 1 THEN
    RETURN false;
  END IF;
  UPDATE messages SET contact_id = survivor WHERE contact_id = loser;
  UPDATE turns SET contact_id = survivor WHERE contact_id = loser;
  DELETE FROM contacts WHERE id = loser RETURNING * INTO gone;
  UPDATE contacts SET
    wa_id = COALESCE(wa_id, gone.wa_id),
    user_id = COALESCE(user_id, gone.user_id),
    parent_user_id = COALESCE(parent_user_id, gone.parent_user_id),
    username = COALESCE(username, gone.username),
    name = COALESCE(name, gone.name),
    last_inbound_at = GREATEST(last_inbound_at, gone.last_inbound_at),
    previous_wa_ids = previous_wa_ids || gone.previous_wa_ids,
    previous_user_ids = previous_user_ids || gone.previous_user_ids,
    created_at = LEAST(created_at, gone.created_at),
    updated_at = now()
  WHERE id = survivor;
  RETURN true;
END $$`;

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
const RESOLVE_CONTACT = `
CREATE FUNCTION mc_resolve_contact(
  p_instance uuid, p_wa_id text, p_user_id text, p_parent_user_id text,
  p_username text, p_name text, p_inbound_at timestamptz
) RETURNS uuid
LANGUAGE plpgsql AS $$
DECLARE
  by_user contacts%ROWTYPE;
  by_wa contacts%ROWTYPE;
  found uuid;
  locked boolean := false;
BEGIN
  IF p_wa_id IS NULL AND p_user_id IS NULL THEN
    RETURN NULL;
  END IF;
  FOR attempt IN 1..5 LOOP
    by_user := NULL;
    by_wa := NULL;
    IF p_user_id IS NOT NULL THEN
      SELECT * INTO by_user FROM contacts WHERE instance_id = p_instance AND user_id = p_user_id;
    END IF;
    IF p_wa_id IS NOT NULL THEN
      SELECT * INTO by_wa FROM contacts WHERE instance_id = p_instance AND wa_id = p_wa_id;
    END IF;

    IF by_user.id IS NOT NULL AND (p_wa_id IS NULL OR by_user.wa_id = p_wa_id) THEN
      found := by_user.id;
    ELSIF by_user.id IS NULL AND by_wa.id IS NOT NULL
        AND (p_user_id IS NULL OR by_wa.user_id IS NULL) AND locked THEN
      found := by_wa.id;
    ELSIF by_user.id IS NULL AND by_wa.id IS NOT NULL AND p_user_id IS NULL THEN
      found := by_wa.id;
    ELSIF by_user.id IS NULL AND by_wa.id IS NULL THEN
      INSERT INTO contacts (instance_id, wa_id, user_id, parent_user_id, username, name, last_inbound_at)
      VALUES (p_instance, p_wa_id, p_user_id, p_parent_user_id, p_username, p_name, p_inbound_at)
      ON CONFLICT DO NOTHING
      RETURNING id INTO found;
      IF found IS NOT NULL THEN
        RETURN found;
      END IF;
      CONTINUE; -- created meanwhile by another session: look again
    ELSIF NOT locked THEN
      -- Keys to link, merge or move: one session at a time per instance, then look again.
      PERFORM pg_advisory_xact_lock(hashtextextended('mc-contacts:' || p_instance::text, 0));
      locked := true;
      CONTINUE;
    ELSIF by_user.id IS NOT NULL THEN
      found := by_user.id;
      IF by_wa.id IS NOT NULL AND by_wa.id <> by_user.id THEN
        IF by_wa.user_id IS NULL THEN
          IF NOT mc_merge_contacts(by_wa.id, by_user.id) THEN
            RETURN found; -- both busy: linked on a later message
          END IF;
        ELSE
          UPDATE contacts SET wa_id = NULL, previous_wa_ids = array_append(previous_wa_ids, wa_id),
            updated_at = now()
          WHERE id = by_wa.id;
        END IF;
      END IF;
    ELSE
      -- The number is on a row with another user id: it changed hands.
      UPDATE contacts SET wa_id = NULL, previous_wa_ids = array_append(previous_wa_ids, wa_id),
        updated_at = now()
      WHERE id = by_wa.id;
      CONTINUE;
    END IF;

    UPDATE contacts SET
      previous_wa_ids = CASE WHEN p_wa_id IS NOT NULL AND wa_id IS NOT NULL AND wa_id <> p_wa_id
        THEN array_append(previous_wa_ids, wa_id) ELSE previous_wa_ids END,
      wa_id = COALESCE(p_wa_id, wa_id),
      user_id = COALESCE(p_user_id, user_id),
      parent_user_id = COALESCE(p_parent_user_id, parent_user_id),
      username = COALESCE(p_username, username),
      name = COALESCE(p_name, name),
      last_inbound_at = GREATEST(last_inbound_at, p_inbound_at),
      updated_at = now()
    WHERE id = found
      AND (p_wa_id IS DISTINCT FROM NULL AND wa_id IS DISTINCT FROM p_wa_id
        OR p_user_id IS DISTINCT FROM NULL AND user_id IS DISTINCT FROM p_user_id
        OR p_parent_user_id IS DISTINCT FROM NULL AND parent_user_id IS DISTINCT FROM p_parent_user_id
        OR p_username IS DISTINCT FROM NULL AND username IS DISTINCT FROM p_username
        OR p_name IS DISTINCT FROM NULL AND name IS DISTINCT FROM p_name
        OR p_inbound_at > COALESCE(last_inbound_at, '-infinity'));
    RETURN found;
  END LOOP;
  RAISE EXCEPTION 'contact for % / % could not be resolved', p_wa_id, p_user_id;
END $$`;

/**
 * Applies an identity change the platform announced (a system message): the
 * contact known by the old number or old user id takes the new ones, keeping
 * its history and remembering the old keys. A row already holding a new key
 * is merged in. Returns the contact, or null when the old keys are unknown.
 */
const REKEY_CONTACT = `
CREATE FUNCTION mc_rekey_contact(
  p_instance uuid, p_old_wa_id text, p_old_user_id text,
  p_new_wa_id text, p_new_user_id text, p_new_parent_user_id text
) RETURNS uuid
LANGUAGE plpgsql AS $$
DECLARE
  target contacts%ROWTYPE;
  holder uuid;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('mc-contacts:' || p_instance::text, 0));
  SELECT * INTO target FROM contacts
  WHERE instance_id = p_instance
    AND ((p_old_user_id IS NOT NULL AND user_id = p_old_user_id)
      OR (p_old_wa_id IS NOT NULL AND wa_id = p_old_wa_id))
  ORDER BY (user_id IS NOT DISTINCT FROM p_old_user_id) DESC
  LIMIT 1;
  IF target.id IS NULL THEN
    RETURN NULL;
  END IF;
  SELECT id INTO holder FROM contacts
  WHERE instance_id = p_instance AND id <> target.id
    AND ((p_new_user_id IS NOT NULL AND user_id = p_new_user_id)
      OR (p_new_wa_id IS NOT NULL AND wa_id = p_new_wa_id))
  LIMIT 1;
  IF holder IS NOT NULL AND NOT mc_merge_contacts(holder, target.id) THEN
    RETURN target.id; -- both busy: the change is applied on a later message
  END IF;
  UPDATE contacts SET
    previous_wa_ids = CASE WHEN p_new_wa_id IS NOT NULL AND wa_id IS NOT NULL AND wa_id <> p_new_wa_id
      THEN array_append(previous_wa_ids, wa_id) ELSE previous_wa_ids END,
    previous_user_ids = CASE WHEN p_new_user_id IS NOT NULL AND user_id IS NOT NULL AND user_id <> p_new_user_id
      THEN array_append(previous_user_ids, user_id) ELSE previous_user_ids END,
    wa_id = COALESCE(p_new_wa_id, wa_id),
    user_id = COALESCE(p_new_user_id, user_id),
    parent_user_id = COALESCE(p_new_parent_user_id, parent_user_id),
    updated_at = now()
  WHERE id = target.id;
  RETURN target.id;
END $$`;
