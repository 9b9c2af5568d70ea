import { contactOrder, lockContactKeys } from '../database/lock-order.js';
import { sqlFunction, sqlTrigger, type SqlObject } from '../database/sql-objects.js';

/**
 * A contact's identity in PostgreSQL: found by number (\`wa_id\`) or
 * business-scoped user id, linked, merged or moved when the platform reports
 * a change (ContactStore calls these), locked in the one order of
 * database/lock-order.ts, and the \`contact.handoff\` event of a pause.
 */
export const CONTACT_SQL: SqlObject[] = [
  // Every statement that writes several contacts locks them here first.
  sqlFunction(
    'mc_lock_contacts',
    `
CREATE OR REPLACE FUNCTION mc_lock_contacts(ids uuid[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM contacts c WHERE c.id = ANY (ids) ORDER BY ${contactOrder('c')} FOR NO KEY UPDATE;
END $$`,
  ),

  // The contact of an identity: by user id, else by number; keys a message brings are
  // linked (merging two rows when each held one), a number on another user id's row moved.
  // Creations race on the unique keys; links, merges and moves take the instance's
  // advisory lock and look again.
  sqlFunction(
    'mc_resolve_contact',
    `
CREATE OR REPLACE FUNCTION mc_resolve_contact(p_instance uuid, p_wa_id text, p_user_id text,
  p_parent_user_id text, p_username text, p_name text, p_inbound_at timestamptz,
  p_link boolean DEFAULT true)
RETURNS uuid LANGUAGE plpgsql AS $$
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
    IF locked THEN
      -- The rows a link, merge or move writes, in the lock order, before it writes any.
      PERFORM 1 FROM contacts c WHERE c.id IN (by_user.id, by_wa.id)
      ORDER BY ${contactOrder('c')} FOR UPDATE;
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
      -- The advisory lock comes before any contact row (lock-order.ts): a caller that may
      -- hold rows already (p_link false) leaves the identity to one that takes it first.
      IF NOT p_link THEN
        RETURN NULL;
      END IF;
      PERFORM ${lockContactKeys('p_instance')};
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
END
$$`,
  ),

  // A number or user-id change (a system message): the contact known by the old keys
  // takes the new ones, merged with one that already held them. Null when none is known.
  sqlFunction(
    'mc_rekey_contact',
    `
CREATE OR REPLACE FUNCTION mc_rekey_contact(p_instance uuid, p_old_wa_id text,
  p_old_user_id text, p_new_wa_id text, p_new_user_id text, p_new_parent_user_id text)
RETURNS uuid LANGUAGE plpgsql AS $$
DECLARE
  target contacts%ROWTYPE;
  holder uuid;
BEGIN
  PERFORM ${lockContactKeys('p_instance')};
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
END
$$`,
  ),

  // Moves the loser's messages and turns to the survivor, whose keys and profile it
  // completes. False (nothing done) while both have an open turn.
  sqlFunction(
    'mc_merge_contacts',
    `
CREATE OR REPLACE FUNCTION mc_merge_contacts(loser uuid, survivor uuid) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  gone contacts%ROWTYPE;
BEGIN
  -- FOR UPDATE, not mc_lock_contacts' NO KEY UPDATE: the loser is deleted, and upgrading a
  -- lock already held would wait on the foreign-key checks of message inserts naming it.
  PERFORM 1 FROM contacts c WHERE c.id IN (loser, survivor) ORDER BY ${contactOrder('c')} FOR UPDATE;
  IF (SELECT count(DISTINCT contact_id) FROM turns
      WHERE contact_id IN (loser, survivor) AND mc_turn_open(status)) > 1 THEN
    RETURN false;
  END IF;
  UPDATE messages SET contact_id = survivor WHERE contact_id = loser;
  UPDATE turns SET contact_id = survivor WHERE contact_id = loser;
  -- The loser's pauses join the survivor's history; one running ends here (its pause does not
  -- carry over: the survivor's stands).
  INSERT INTO contact_handoffs (contact_id, since, until, by, reason, account_name, ended_at,
    ended_by)
  SELECT survivor, since, until, by, reason, account_name,
    COALESCE(ended_at, CASE WHEN until > now() THEN now() END),
    CASE WHEN ended_at IS NULL AND until > now() THEN 'auto' ELSE ended_by END
  FROM contact_handoffs WHERE contact_id = loser
  ON CONFLICT DO NOTHING;
  DELETE FROM contacts WHERE id = loser RETURNING * INTO gone;
  -- What either knew of the person: an opt-out either way stays; the latest marketing
  -- preference and phone-book entry win.
  UPDATE contacts SET
    wa_id = COALESCE(wa_id, gone.wa_id),
    user_id = COALESCE(user_id, gone.user_id),
    parent_user_id = COALESCE(parent_user_id, gone.parent_user_id),
    username = COALESCE(username, gone.username),
    name = COALESCE(name, gone.name),
    last_inbound_at = GREATEST(last_inbound_at, gone.last_inbound_at),
    last_outbound_at = GREATEST(last_outbound_at, gone.last_outbound_at),
    last_imported_at = GREATEST(last_imported_at, gone.last_imported_at),
    opted_out_at = COALESCE(opted_out_at, gone.opted_out_at),
    -- At the same time a stop wins, as ContactStore.setMarketingPreference has it.
    marketing_opted_out_at = CASE
      WHEN gone.marketing_pref_at > COALESCE(marketing_pref_at, '-infinity')
        OR (gone.marketing_pref_at = marketing_pref_at AND gone.marketing_opted_out_at IS NOT NULL)
      THEN gone.marketing_opted_out_at ELSE marketing_opted_out_at END,
    marketing_pref_at = GREATEST(marketing_pref_at, gone.marketing_pref_at),
    phone_name = CASE WHEN gone.phone_name_at > COALESCE(phone_name_at, '-infinity')
      THEN gone.phone_name ELSE COALESCE(phone_name, gone.phone_name) END,
    phone_name_at = GREATEST(phone_name_at, gone.phone_name_at),
    previous_wa_ids = previous_wa_ids || gone.previous_wa_ids,
    previous_user_ids = previous_user_ids || gone.previous_user_ids,
    created_at = LEAST(created_at, gone.created_at),
    updated_at = now()
  WHERE id = survivor;
  RETURN true;
END
$$`,
  ),

  // What a contact last did, kept on the row for the list's order (GET /contacts): its last
  // message either way, or its imported history's latest; one with none (named only by the
  // phone book or a preference) has the epoch, so it lists last, not first by its creation.
  sqlFunction(
    'mc_contact_activity',
    `
CREATE OR REPLACE FUNCTION mc_contact_activity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.last_activity_at := COALESCE(
    GREATEST(NEW.last_inbound_at, NEW.last_outbound_at, NEW.last_imported_at), 'epoch');
  RETURN NEW;
END $$`,
  ),
  sqlTrigger(
    'tr_contact_activity',
    'contacts',
    `
CREATE TRIGGER tr_contact_activity
BEFORE INSERT OR UPDATE OF last_inbound_at, last_outbound_at, last_imported_at ON contacts
FOR EACH ROW EXECUTE FUNCTION mc_contact_activity()`,
  ),
  // A pause started, changed or ended: its contact.handoff event, a statement at a time so
  // that the events of several contacts (the timer ending pauses, a person's sends) reach
  // their lanes in the lock order, not a row at a time; and the contact's handoff history.
  sqlFunction(
    'mc_contacts_handoff',
    `
CREATE OR REPLACE FUNCTION mc_contacts_handoff() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events (type, instance_id, lane, data)
  SELECT 'contact.handoff', n.instance_id, 'contact:' || n.id, jsonb_build_object(
    'paused', n.handoff_until IS NOT NULL AND n.handoff_until > now(),
    'until', mc_iso(n.handoff_until), 'since', mc_iso(n.handoff_since),
    'reason', n.handoff_reason, 'by', n.handoff_by,
    'account', CASE WHEN n.handoff_account_name IS NOT NULL THEN jsonb_build_object(
      'id', n.handoff_account_id, 'display_name', n.handoff_account_name) END,
    'contact', jsonb_build_object('wa_id', n.wa_id, 'user_id', n.user_id, 'name', n.name))
  FROM after_rows n JOIN before_rows o ON o.id = n.id
  WHERE o.handoff_until IS DISTINCT FROM n.handoff_until OR o.handoff_by IS DISTINCT FROM n.handoff_by
     OR o.handoff_account_name IS DISTINCT FROM n.handoff_account_name
  ORDER BY ${contactOrder('n')};
  -- The history: a pause begun or changed is its row (by its start); one ended says so.
  INSERT INTO contact_handoffs AS h (contact_id, since, until, by, reason, account_name)
  SELECT n.id, n.handoff_since, n.handoff_until, n.handoff_by, n.handoff_reason,
    n.handoff_account_name
  FROM after_rows n JOIN before_rows o ON o.id = n.id
  WHERE n.handoff_until IS NOT NULL AND n.handoff_since IS NOT NULL
    AND (o.handoff_until IS DISTINCT FROM n.handoff_until OR o.handoff_by IS DISTINCT FROM n.handoff_by
         OR o.handoff_account_name IS DISTINCT FROM n.handoff_account_name)
  ORDER BY ${contactOrder('n')}
  ON CONFLICT (contact_id, since) DO UPDATE SET until = EXCLUDED.until, by = EXCLUDED.by,
    reason = EXCLUDED.reason, account_name = EXCLUDED.account_name, ended_at = NULL,
    ended_by = NULL;
  UPDATE contact_handoffs h SET ended_at = now(), ended_by = n.handoff_by
  FROM after_rows n JOIN before_rows o ON o.id = n.id
  WHERE h.contact_id = n.id AND h.since = o.handoff_since
    AND o.handoff_until IS NOT NULL AND n.handoff_until IS NULL;
  RETURN NULL;
END $$`,
  ),
  // What the inbox shows of a contact changed (its pause, opt-outs, names or keys): the live
  // streams hear of it. A new message or send is heard of through its message.
  sqlFunction(
    'mc_contacts_live',
    `
CREATE OR REPLACE FUNCTION mc_contacts_live() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM live_listeners) THEN
    PERFORM mc_live_notify('contact', array_agg(n.instance_id ORDER BY n.id),
      array_agg(n.id ORDER BY n.id))
    FROM after_rows n JOIN before_rows o ON o.id = n.id
    WHERE o.handoff_until IS DISTINCT FROM n.handoff_until
       OR o.handoff_by IS DISTINCT FROM n.handoff_by
       OR o.handoff_account_name IS DISTINCT FROM n.handoff_account_name
       OR o.opted_out_at IS DISTINCT FROM n.opted_out_at OR o.name IS DISTINCT FROM n.name
       OR o.marketing_opted_out_at IS DISTINCT FROM n.marketing_opted_out_at
       OR o.phone_name IS DISTINCT FROM n.phone_name
       OR o.wa_id IS DISTINCT FROM n.wa_id OR o.user_id IS DISTINCT FROM n.user_id
       OR o.read_seq IS DISTINCT FROM n.read_seq;
  END IF;
  RETURN NULL;
END $$`,
  ),
  sqlTrigger(
    'tr_contacts_live',
    'contacts',
    `
CREATE TRIGGER tr_contacts_live AFTER UPDATE ON contacts
REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
FOR EACH STATEMENT EXECUTE FUNCTION mc_contacts_live()`,
  ),
  sqlTrigger(
    'tr_contacts_handoff',
    'contacts',
    `
CREATE TRIGGER tr_contacts_handoff AFTER UPDATE ON contacts
REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
FOR EACH STATEMENT EXECUTE FUNCTION mc_contacts_handoff()`,
  ),
];
