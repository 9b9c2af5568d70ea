import type { TimeIdPosition } from '../common/time-id-cursor.js';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { contactOrder, lockContactKeys } from '../database/lock-order.js';
import { epochMicros, prepared, rows } from '../database/sql.js';
import type { IdentityChange, IdentityRow } from './contact-identity.js';
import type { PersonRef } from '../accounts/account.types.js';
import type {
  Contact,
  ContactKeys,
  ContactState,
  HandoffBy,
  HandoffRecord,
} from './contact.types.js';

/** GET /contacts' `state` filters, over contacts `c` (as ContactDto tells them). */
const STATE_CONDITION: Record<ContactState, string> = {
  waiting: `(c.handoff_until > now() AND c.handoff_by = 'agent')`,
  paused: `c.handoff_until > now()`,
  agent: `(c.handoff_until IS NULL OR c.handoff_until <= now()) AND c.opted_out_at IS NULL`,
  window_open: `c.last_inbound_at > now() - interval '24 hours'`,
  opted_out: `c.opted_out_at IS NOT NULL`,
};

/** A running pause a client, an admin or a person started: a send keeps it theirs (contact `c`). */
const HELD_BY_PEOPLE = `(c.handoff_until > now() AND c.handoff_by IN ('api', 'admin', 'person'))`;

/**
 * An inbound message `m` that no turn took and that waits no more, which a
 * hand-back gives the agent again: not a system message, not imported
 * history, not a stop or start word (the upper-cased words of `words`).
 */
const AGENT_MAY_TAKE_AGAIN = (m: string, words: string): string =>
  `${m}.direction = 'inbound' AND ${m}.turn_id IS NULL AND NOT ${m}.awaiting_turn
   AND ${m}.type <> 'system' AND NOT ${m}.imported
   AND NOT (${m}.type = 'text' AND upper(btrim(${m}.body->'text'->>'body')) = ANY(${words}::text[]))`;

/** A send that pauses the agent for its contact: to whom, and the person who made it (if one did). */
export interface PersonSend {
  instanceId: string;
  address: string;
  byNumber: boolean;
  person?: PersonRef | null;
  /** The owner answered from the platform's phone app (an echo). */
  phoneApp?: boolean;
  /** How long this pause lasts, when not the usual (an echo's: from its own time). */
  seconds?: number;
}

/** Why the agent paused for a contact the owner answered from the phone app. */
export const PHONE_APP_REASON = 'the owner replied from the phone app';

/**
 * Resolves identities $2… of instance $1 through mc_resolve_contact, by the
 * contact that holds a key now (new ones last): the lock order. Without
 * `link`, an identity whose keys need linking comes back with a null id.
 */
const resolveStatement = (link: boolean): string =>
  `SELECT i.n, mc_resolve_contact($1, i.wa_id, i.user_id, i.parent_user_id, i.username, i.name,
     i.at, ${link}) AS id
   FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
     WITH ORDINALITY AS i(wa_id, user_id, parent_user_id, username, name, at, n)
   ORDER BY (SELECT c.id FROM contacts c WHERE c.instance_id = $1
               AND (c.user_id = i.user_id OR c.wa_id = i.wa_id)
             ORDER BY ${contactOrder('c')} LIMIT 1) NULLS LAST, i.n`;

function resolveParams(instanceId: string, identities: IdentityRow[]): unknown[] {
  return [
    instanceId,
    identities.map((i) => i.waId),
    identities.map((i) => i.userId),
    identities.map((i) => i.parentUserId),
    identities.map((i) => i.username),
    identities.map((i) => i.name),
    identities.map((i) => i.lastInboundAt),
  ];
}

/**
 * The SQL of `contacts`: keys (through the identity functions of
 * contact.functions.sql.ts), profiles, the service window's times, handoffs and
 * opt-outs. A pause or an opt-out stops the contact's messages waiting for a
 * turn in the same statement. MessageStore reads `contacts` where a message
 * needs its contact, and makes a number sent to a contact (mc_resolve_contact).
 */
@Injectable()
export class ContactStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * When the contact a send names last wrote: by number, or by user id (or
   * parent id, which several contacts may share: the latest of them).
   */
  async lastInbound(
    instanceId: string,
    address: string,
    byNumber: boolean,
  ): Promise<{ last: Date | null; optedOut: boolean }> {
    const [contact] = await rows<{ last: Date | null; opted_out: boolean | null }>(
      this.db,
      byNumber
        ? `SELECT last_inbound_at AS last, opted_out_at IS NOT NULL AS opted_out FROM contacts
           WHERE instance_id = $1 AND wa_id = $2`
        : `SELECT max(last_inbound_at) AS last, bool_or(opted_out_at IS NOT NULL) AS opted_out
           FROM contacts WHERE instance_id = $1 AND (user_id = $2 OR parent_user_id = $2)`,
      [instanceId, address],
    );
    return { last: contact?.last ?? null, optedOut: contact?.opted_out ?? false };
  }

  /**
   * The contact of each identity (see mc_resolve_contact: found by either key,
   * linked, merged or created), with its profile and last inbound time
   * brought forward. Numbers already known, without a user id (most
   * messages), are found and brought forward in one set-based statement;
   * the others go through mc_resolve_contact, in one more, except those whose
   * keys must be linked, merged or moved: each of those in a transaction of
   * its own that takes the instance's contact-keys lock first.
   */
  async resolveContacts(
    instanceId: string,
    identities: IdentityRow[],
  ): Promise<Map<string, string>> {
    const resolved = new Map<string, string>();
    // Contacts are locked in the one order (database/lock-order.ts), so batches
    // and sends sharing contacts wait for each other instead of deadlocking.
    // The lock is the one the update takes (no key changes): FOR UPDATE would
    // also wait on every message insert naming the contact (its foreign key
    // check), and made storing a backlog about a quarter slower. The rows are
    // locked straight off the index, not above the join with the batch: that
    // sorted join, rechecked on each row a concurrent batch had moved, made
    // storing a backlog a quarter slower too (npm run bench -- pipeline).
    const ordered = [...identities].sort(
      (x, y) =>
        (x.waId ?? '').localeCompare(y.waId ?? '') ||
        (x.userId ?? '').localeCompare(y.userId ?? ''),
    );
    const byNumber = ordered.filter((i) => i.waId !== null && i.userId === null);
    if (byNumber.length > 0) {
      const known = await prepared<{ n: string; id: string }>(
        this.db,
        'contacts_known_numbers',
        `WITH i AS (
           SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[])
             WITH ORDINALITY AS i(wa_id, parent_user_id, username, name, at, n)
         ), locked AS (
           SELECT c.id, c.wa_id FROM contacts c
           WHERE c.instance_id = $1 AND c.wa_id = ANY($2::text[])
           ORDER BY ${contactOrder('c')} FOR NO KEY UPDATE
         ), known AS (
           SELECT i.*, l.id FROM i JOIN locked l ON l.wa_id = i.wa_id
         ), touched AS (
           UPDATE contacts c SET
             parent_user_id = COALESCE(k.parent_user_id, c.parent_user_id),
             username = COALESCE(k.username, c.username),
             name = COALESCE(k.name, c.name),
             last_inbound_at = GREATEST(c.last_inbound_at, k.at),
             updated_at = now()
           FROM known k
           WHERE c.id = k.id
             AND (k.parent_user_id IS NOT NULL AND c.parent_user_id IS DISTINCT FROM k.parent_user_id
               OR k.username IS NOT NULL AND c.username IS DISTINCT FROM k.username
               OR k.name IS NOT NULL AND c.name IS DISTINCT FROM k.name
               OR k.at > COALESCE(c.last_inbound_at, '-infinity'))
         )
         SELECT n, id FROM known`,
        [
          instanceId,
          byNumber.map((i) => i.waId),
          byNumber.map((i) => i.parentUserId),
          byNumber.map((i) => i.username),
          byNumber.map((i) => i.name),
          byNumber.map((i) => i.lastInboundAt),
        ],
      );
      for (const row of known) resolved.set(byNumber[Number(row.n) - 1].key, row.id);
    }
    const others = ordered.filter((i) => !resolved.has(i.key));
    if (others.length === 0) return resolved;
    // Identities whose keys need linking, merging or moving come back null from the first
    // statement, which may hold other contacts by then; the second takes the instance's
    // contact-keys lock before any row (the lock order's level 0) and resolves them.
    const first = await prepared<{ n: string; id: string | null }>(
      this.db,
      'contacts_resolve',
      resolveStatement(false),
      resolveParams(instanceId, others),
    );
    for (const row of first) if (row.id) resolved.set(others[Number(row.n) - 1].key, row.id);
    const linking = others.filter((i) => !resolved.has(i.key));
    // One identity a transaction: a link may write two rows, and two identities' rows
    // would not come in id order (rare: a number or user id met on two contacts).
    for (const identity of linking) {
      const [row] = await this.db.transaction(async (manager) => {
        await manager.query(`SELECT ${lockContactKeys('$1::uuid')}`, [instanceId]);
        return rows<{ n: string; id: string | null }>(
          manager,
          resolveStatement(true),
          resolveParams(instanceId, [identity]),
        );
      });
      if (row?.id) resolved.set(identity.key, row.id);
    }
    return resolved;
  }

  /** Applies a number or user-id change to the contact known by the old keys; null when unknown. */
  async rekeyContact(instanceId: string, change: IdentityChange): Promise<string | null> {
    const [row] = await rows<{ id: string | null }>(
      this.db,
      'SELECT mc_rekey_contact($1, $2, $3, $4, $5, $6) AS id',
      [
        instanceId,
        change.old.waId,
        change.old.userId,
        change.new.waId,
        change.new.userId,
        change.new.parentUserId,
      ],
    );
    return row?.id ?? null;
  }

  /** A contact's keys and profile; null when it is gone. */
  async contactKeys(contactId: string): Promise<ContactKeys | null> {
    const [contact] = await rows<ContactKeys>(
      this.db,
      'SELECT wa_id, user_id, parent_user_id, username, name FROM contacts WHERE id = $1',
      [contactId],
    );
    return contact ?? null;
  }

  /** Contacts by id (those gone are left out): what a live stream says changed. */
  contactsByIds(ids: string[]): Promise<Contact[]> {
    return rows<Contact>(this.db, 'SELECT * FROM contacts WHERE id = ANY($1::uuid[])', [ids]);
  }

  /** A contact's latest handoffs (one per pause), newest first. */
  handoffHistory(contactId: string, limit: number): Promise<HandoffRecord[]> {
    return rows<HandoffRecord>(
      this.db,
      `SELECT since, until, by, reason, account_name, ended_at, ended_by FROM contact_handoffs
       WHERE contact_id = $1 ORDER BY since DESC LIMIT $2`,
      [contactId, limit],
    );
  }

  /**
   * A person read the conversation up to its message `wamid` (the newest on
   * their screen, in arrival order): the mark moves to the newest-stored
   * message at or before it in arrival order (one stored later but arriving
   * earlier is on screen too), never back. The contact as it is; null when
   * that message is not the contact's.
   */
  async markRead(contactId: string, wamid: string): Promise<Contact | null> {
    const arrival = (m: string) =>
      `(date_trunc('second', ${m}.created_at AT TIME ZONE 'UTC'), ${m}.received_at, ${m}.seq)`;
    const [contact] = await rows<Contact>(
      this.db,
      `WITH shown AS (
         SELECT m.created_at, m.received_at, m.seq FROM messages m
         WHERE m.wamid = $2 AND m.contact_id = $1
       ), seen AS (
         SELECT m.stored_tx, m.seq FROM messages m, shown s
         WHERE m.contact_id = $1 AND ${arrival('m')} <= ${arrival('s')}
         ORDER BY m.stored_tx DESC, m.seq DESC LIMIT 1
       ), moved AS (
         UPDATE contacts c SET read_tx = seen.stored_tx, read_seq = seen.seq
         FROM seen
         WHERE c.id = $1
           AND (c.read_tx IS NULL OR (seen.stored_tx, seen.seq) > (c.read_tx, c.read_seq))
         RETURNING c.*
       )
       SELECT * FROM moved
       UNION ALL
       SELECT c.* FROM contacts c
       WHERE c.id = $1 AND EXISTS (SELECT 1 FROM shown) AND NOT EXISTS (SELECT 1 FROM moved)`,
      [contactId, wamid],
    );
    return contact ?? null;
  }

  /**
   * Of these numbers and user ids, those whose contact opted out, and why:
   * `opted_out` (a stop word), or `marketing_opted_out` (stopped marketing
   * messages in the app) when `marketing`.
   */
  async optedOut(
    instanceId: string,
    numbers: string[],
    userIds: string[],
    marketing = false,
  ): Promise<Map<string, 'opted_out' | 'marketing_opted_out'>> {
    const found = await rows<{ address: string; reason: 'opted_out' | 'marketing_opted_out' }>(
      this.db,
      `SELECT address, reason FROM (
         SELECT wa_id AS address, opted_out_at, marketing_opted_out_at FROM contacts
         WHERE instance_id = $1 AND wa_id = ANY($2::text[])
         UNION ALL
         SELECT user_id, opted_out_at, marketing_opted_out_at FROM contacts
         WHERE instance_id = $1 AND user_id = ANY($3::text[])) c,
       LATERAL (SELECT CASE WHEN c.opted_out_at IS NOT NULL THEN 'opted_out'
         WHEN $4 AND c.marketing_opted_out_at IS NOT NULL THEN 'marketing_opted_out' END
         AS reason) r
       WHERE r.reason IS NOT NULL`,
      [instanceId, numbers, userIds, marketing],
    );
    return new Map(found.map((row) => [row.address, row.reason]));
  }

  /**
   * A customer's marketing preference (`stop` or `resume`) at `at`: applied
   * unless a later one was (re-delivered webhooks change nothing). The
   * contact by number (or, `byNumber` false, by user id); null when the
   * instance has none.
   */
  async setMarketingPreference(
    instanceId: string,
    address: string,
    stop: boolean,
    at: Date,
    byNumber = true,
  ): Promise<string | null> {
    const [contact] = await rows<{ id: string }>(
      this.db,
      `UPDATE contacts SET
         marketing_opted_out_at = CASE WHEN $3 THEN COALESCE(marketing_opted_out_at, $4) END,
         marketing_pref_at = $4
       WHERE instance_id = $1 AND ${byNumber ? 'wa_id' : 'user_id'} = $2
         -- The latest wins; at the same time a stop does (the result is the same in any order).
         AND (marketing_pref_at IS NULL OR marketing_pref_at < $4
           OR (marketing_pref_at = $4 AND $3))
       RETURNING id`,
      [instanceId, address, stop, at],
    );
    return contact?.id ?? null;
  }

  /**
   * The owner's phone address book (coexistence): each number's name there
   * (null: removed from it) at the entry's time. It becomes the contact's
   * name only while the name is none or the phone's own: what the customer's
   * profile says stays. An entry older than the last one applied changes
   * nothing (re-delivered webhooks). Contacts must exist (the caller
   * resolves them first).
   */
  async setPhoneNames(
    instanceId: string,
    entries: Array<{ waId: string; name: string | null; at: Date }>,
  ): Promise<number> {
    if (entries.length === 0) return 0;
    const changed = await rows<{ id: string }>(
      this.db,
      // Several contacts: locked in the one order first (database/lock-order.ts).
      `WITH e AS (
         SELECT DISTINCT ON (wa_id) wa_id, name, at
         FROM unnest($2::text[], $3::text[], $4::timestamptz[]) WITH ORDINALITY AS x(wa_id, name, at, n)
         ORDER BY wa_id, at DESC, n DESC
       ), locked AS MATERIALIZED (
         SELECT c.id, e.name, e.at FROM contacts c JOIN e ON c.wa_id = e.wa_id
         WHERE c.instance_id = $1 AND (c.phone_name_at IS NULL OR c.phone_name_at <= e.at)
           AND (c.phone_name IS DISTINCT FROM e.name OR c.phone_name_at IS DISTINCT FROM e.at)
         ORDER BY ${contactOrder('c')} FOR NO KEY UPDATE OF c
       )
       UPDATE contacts c SET phone_name = locked.name, phone_name_at = locked.at,
         updated_at = now(),
         name = CASE WHEN locked.name IS NOT NULL
           AND (c.name IS NULL OR c.name IS NOT DISTINCT FROM c.phone_name) THEN locked.name
           ELSE c.name END
       FROM locked WHERE c.id = locked.id
         -- Checked again on the row as locked: a newer entry may have come meanwhile.
         AND (c.phone_name_at IS NULL OR c.phone_name_at <= locked.at)
       RETURNING c.id`,
      [
        instanceId,
        entries.map((e) => e.waId),
        entries.map((e) => e.name),
        entries.map((e) => e.at.toISOString()),
      ],
    );
    return changed.length;
  }

  /** Whether the contact a send names stopped marketing messages. */
  async marketingOptedOut(
    instanceId: string,
    address: string,
    byNumber: boolean,
  ): Promise<boolean> {
    const [found] = await rows<{ out: boolean }>(
      this.db,
      byNumber
        ? `SELECT marketing_opted_out_at IS NOT NULL AS out FROM contacts
           WHERE instance_id = $1 AND wa_id = $2`
        : `SELECT bool_or(marketing_opted_out_at IS NOT NULL) AS out FROM contacts
           WHERE instance_id = $1 AND (user_id = $2 OR parent_user_id = $2)`,
      [instanceId, address],
    );
    return found?.out ?? false;
  }

  /** An instance's contact by number (digits) or user id; null when unknown. */
  async contactByKey(instanceId: string, key: string): Promise<Contact | null> {
    const [contact] = await rows<Contact>(
      this.db,
      /^\d+$/.test(key)
        ? 'SELECT * FROM contacts WHERE instance_id = $1 AND wa_id = $2'
        : 'SELECT * FROM contacts WHERE instance_id = $1 AND user_id = $2',
      [instanceId, key],
    );
    return contact ?? null;
  }

  /**
   * A page of an instance's contacts, newest activity first, after the
   * position `after` ([last activity, id]); `search` is a number prefix
   * (digits) or a name prefix, `state` one of CONTACT_STATES. `activity` is
   * the last activity in microseconds.
   */
  listContacts(
    instanceId: string,
    search: string | undefined,
    after: TimeIdPosition | null,
    limit: number,
    state?: ContactState,
  ): Promise<Array<Contact & { activity: string }>> {
    const prefix = search?.replace(/[\\%_]/g, (c) => `\\${c}`);
    return rows(
      this.db,
      `SELECT c.*, ${epochMicros('c.last_activity_at')} AS activity FROM contacts c
       WHERE c.instance_id = $1
         AND ($2::text IS NULL OR ($2 ~ '^[0-9]+$' AND c.wa_id LIKE $2 || '%')
              OR lower(c.name) LIKE lower($2) || '%')
         AND ($3::timestamptz IS NULL OR (c.last_activity_at, c.id) < ($3::timestamptz, $4::uuid))
         AND ${state ? STATE_CONDITION[state] : 'true'}
       ORDER BY c.last_activity_at DESC, c.id DESC
       LIMIT $5`,
      [instanceId, prefix ?? null, after?.at ?? null, after?.id ?? null, limit],
    );
  }

  /**
   * Pauses the agent for a contact until `until` (a pause already running
   * keeps its start). Messages waiting for a turn wait no more: they are
   * the pending ones a hand-back may include. The contact, or null.
   */
  async startHandoff(
    contactId: string,
    until: Date,
    reason: string | null,
    by: HandoffBy,
    person: PersonRef | null = null,
  ): Promise<Contact | null> {
    // One statement with messages.awaiting_turn: no turn claims a message once the pause is written.
    const [contact] = await rows<Contact>(
      this.db,
      `WITH first_waiting AS (
         SELECT min(received_at) AS at FROM messages WHERE contact_id = $1 AND awaiting_turn
       ), paused AS (
         -- The pause covers the messages waiting now (a hand-back may include them). The
         -- agent asking for a person does not replace a person's own pause.
         UPDATE contacts SET handoff_until = $2, handoff_reason = $3, handoff_by = $4,
           handoff_account_id = $5, handoff_account_name = $6,
           handoff_since = CASE WHEN handoff_until > now() THEN handoff_since
                                ELSE LEAST(now(), (SELECT at FROM first_waiting)) END,
           updated_at = now()
         WHERE id = $1
           AND NOT ($4 = 'agent' AND COALESCE(handoff_until > now() AND handoff_by <> 'agent', false))
         RETURNING *
       ), waiting AS (
         UPDATE messages SET awaiting_turn = false WHERE contact_id = $1 AND awaiting_turn
       )
       SELECT * FROM paused`,
      [contactId, until, reason, by, person?.accountId ?? null, person?.displayName ?? null],
    );
    return contact ?? null;
  }

  /**
   * Hands a contact back to the agent. With `includePending`, the messages
   * that came during the pause (and were not answered) wait for a turn again.
   * The contact, and how many messages now wait.
   */
  async endHandoff(
    contactId: string,
    by: HandoffBy,
    includePending: boolean,
    notForTheAgent: string[],
    person: PersonRef | null = null,
  ): Promise<{ contact: Contact | null; pending: number }> {
    // One statement with messages.awaiting_turn: what waits again is what this hand-back ends.
    const [contact] = await rows<Contact & { pending: number }>(
      this.db,
      `WITH before AS (
         SELECT handoff_since, opted_out_at FROM contacts WHERE id = $1 -- as the pause left it
       ), resumed AS (
         UPDATE contacts SET handoff_until = NULL, handoff_by = $2, handoff_reason = NULL,
           handoff_account_id = $5, handoff_account_name = $6, updated_at = now()
         WHERE id = $1 RETURNING *
       ), pending AS (
         UPDATE messages m SET awaiting_turn = true
         FROM before
         WHERE $3 AND m.contact_id = $1 AND ${AGENT_MAY_TAKE_AGAIN('m', '$4')}
           AND m.received_at >= COALESCE(before.handoff_since, now())
           AND before.opted_out_at IS NULL
         RETURNING m.id
       )
       SELECT resumed.*, (SELECT count(*)::int FROM pending) AS pending FROM resumed`,
      [
        contactId,
        by,
        includePending,
        notForTheAgent,
        person?.accountId ?? null,
        person?.displayName ?? null,
      ],
    );
    return { contact: contact ?? null, pending: contact?.pending ?? 0 };
  }

  /**
   * A person's sends pause the agent for their contacts until at least
   * `seconds` after the send. A pause that already lasts that long (a
   * client's or an admin's longer one, or one written a moment ago) is left
   * as it is: never shortened. A pause is written `slackSeconds` longer, so a
   * chat rewrites it (a `contact.handoff` event) at most once per slack, not
   * per message. A running pause a client, an admin or a person who logged
   * in started stays theirs, only longer; any other becomes the sender's (by
   * `auto`, with the person who sent, if one did).
   */
  async pauseForPeople(sends: PersonSend[], seconds: number, slackSeconds: number): Promise<void> {
    // One statement with messages.awaiting_turn: no turn claims a message once the person's pause is written.
    await this.db.query(
      `WITH locked AS MATERIALIZED (
       -- By id, through mc_lock_contacts: a lock taken above this join instead cost
       -- about a sixth of the sends a second (npm run bench -- send).
       SELECT mc_lock_contacts(ARRAY(
         SELECT c.id FROM contacts c
         JOIN unnest($1::uuid[], $2::text[], $3::boolean[]) AS s(instance_id, address, by_number)
           ON c.instance_id = s.instance_id
           AND (CASE WHEN s.by_number THEN c.wa_id = s.address ELSE c.user_id = s.address END)))
       ), paused AS (
       UPDATE contacts c SET handoff_until = GREATEST(c.handoff_until,
           now() + (COALESCE(s.seconds, $4::float8) + $5::float8) * interval '1 second'),
         handoff_since = CASE WHEN c.handoff_until > now() THEN c.handoff_since ELSE now() END,
         handoff_reason = CASE WHEN ${HELD_BY_PEOPLE} THEN c.handoff_reason
                               ELSE COALESCE(s.account_name || ' replied',
                                             CASE WHEN s.phone_app THEN $8
                                                  ELSE 'a person replied through the API' END) END,
         handoff_by = CASE WHEN ${HELD_BY_PEOPLE} THEN c.handoff_by ELSE 'auto' END,
         handoff_account_id = CASE WHEN ${HELD_BY_PEOPLE} THEN c.handoff_account_id
                                   ELSE s.account_id END,
         handoff_account_name = CASE WHEN ${HELD_BY_PEOPLE} THEN c.handoff_account_name
                                     ELSE s.account_name END,
         updated_at = now()
       FROM unnest($1::uuid[], $2::text[], $3::boolean[], $6::uuid[], $7::text[], $9::boolean[],
                   $10::float8[])
           AS s(instance_id, address, by_number, account_id, account_name, phone_app, seconds),
         locked
       WHERE c.instance_id = s.instance_id
         AND (CASE WHEN s.by_number THEN c.wa_id = s.address ELSE c.user_id = s.address END)
         AND (c.handoff_until IS NULL
              OR c.handoff_until < now() + COALESCE(s.seconds, $4::float8) * interval '1 second'
              OR c.handoff_by = 'agent' AND c.handoff_until > now())
       RETURNING c.id
       )
       -- What waited for the agent waits no more: the person answers it.
       UPDATE messages m SET awaiting_turn = false
       FROM paused WHERE m.contact_id = paused.id AND m.awaiting_turn`,
      [
        sends.map((s) => s.instanceId),
        sends.map((s) => s.address),
        sends.map((s) => s.byNumber),
        seconds,
        slackSeconds,
        sends.map((s) => s.person?.accountId ?? null),
        sends.map((s) => s.person?.displayName ?? null),
        PHONE_APP_REASON,
        sends.map((s) => s.phoneApp ?? false),
        sends.map((s) => s.seconds ?? null),
      ],
    );
  }

  /**
   * Ends the pauses an echo began that was this service's own send (the
   * platform's echo came before the send was recorded, `wamids`): only a
   * pause the phone app began after that echo was stored, with nothing sent
   * since but the agent's (any other row of `wamids`, a status's placeholder
   * or an earlier try's, lifts nothing). What
   * the pause left unanswered waits for a turn again (the sweeper arms its flush).
   * The contacts handed back.
   */
  async liftEchoPauses(
    contactIds: string[],
    wamids: string[],
    notForTheAgent: string[],
  ): Promise<string[]> {
    if (contactIds.length === 0) return [];
    const lifted = await rows<{ id: string }>(
      this.db,
      `WITH locked AS MATERIALIZED (
         SELECT c.id FROM contacts c WHERE c.id = ANY($1::uuid[])
           AND c.handoff_by = 'auto' AND c.handoff_until > now() AND c.handoff_reason = $2
           -- The pause began once the echo was stored (not one running before it)…
           AND c.handoff_since >= (SELECT min(e.received_at) FROM messages e
                                   WHERE e.contact_id = c.id AND e.wamid = ANY($4::text[]))
           -- …and since then nothing but the agent's was sent to the customer.
           AND NOT EXISTS (
             SELECT 1 FROM messages p WHERE p.contact_id = c.id AND p.direction = 'outbound'
               AND p.sent_by <> 'agent' AND p.wamid <> ALL($4::text[])
               AND p.received_at >= (SELECT min(e.received_at) FROM messages e
                                     WHERE e.contact_id = c.id AND e.wamid = ANY($4::text[])))
         ORDER BY ${contactOrder('c')} FOR NO KEY UPDATE OF c
       ), resumed AS (
         UPDATE contacts c SET handoff_until = NULL, handoff_by = 'auto',
           handoff_reason = 'an echo of this service''s own send', handoff_account_id = NULL,
           handoff_account_name = NULL, updated_at = now()
         FROM locked WHERE c.id = locked.id RETURNING c.id, c.opted_out_at, c.handoff_since
       ), mistaken AS (
         -- No person stepped in: the agent's handoff history does not say one did.
         DELETE FROM contact_handoffs h USING resumed
         WHERE h.contact_id = resumed.id AND h.since = resumed.handoff_since
       ), pending AS (
         -- Unanswered: no turn took it and nobody has written to the customer since.
         UPDATE messages m SET awaiting_turn = true
         FROM resumed
         WHERE m.contact_id = resumed.id AND ${AGENT_MAY_TAKE_AGAIN('m', '$3')}
           AND resumed.opted_out_at IS NULL
           AND m.received_at > COALESCE((
             SELECT max(o.received_at) FROM messages o
             WHERE o.contact_id = resumed.id AND o.direction = 'outbound'
               AND o.wamid <> ALL($4::text[])), '-infinity')
       )
       SELECT id FROM resumed`,
      [contactIds, PHONE_APP_REASON, notForTheAgent, wamids],
    );
    return lifted.map((row) => row.id);
  }

  /**
   * What the agent's next reply part needs of its turn's contact, read as
   * it is sent: the contact (a merge may have moved the turn to another),
   * its keys now (a number or user id may have changed since the turn
   * began), and whether a person (not the agent) has it or it opted out, so
   * the agent says nothing. Null when the contact is gone.
   */
  async replyTarget(
    turnId: string,
  ): Promise<(ContactKeys & { id: string; paused: boolean }) | null> {
    const [contact] = await rows<ContactKeys & { id: string; paused: boolean }>(
      this.db,
      `SELECT c.id, c.wa_id, c.user_id, c.parent_user_id, c.username, c.name,
         COALESCE(c.handoff_until > now() AND c.handoff_by <> 'agent', false)
           OR c.opted_out_at IS NOT NULL AS paused
       FROM turns t JOIN contacts c ON c.id = t.contact_id WHERE t.id = $1`,
      [turnId],
    );
    return contact ?? null;
  }

  /**
   * Where an address (a number, or a user id) moved: the keys now of the
   * contact that had it before a number or user-id change. Null while a
   * contact still holds it (it is still good), or when none ever had it.
   */
  async movedKeys(
    instanceId: string,
    address: string,
    byNumber: boolean,
  ): Promise<Pick<ContactKeys, 'wa_id' | 'user_id'> | null> {
    const held = await rows(
      this.db,
      byNumber
        ? 'SELECT 1 FROM contacts WHERE instance_id = $1 AND wa_id = $2'
        : `SELECT 1 FROM contacts WHERE instance_id = $1
           AND (user_id = $2 OR parent_user_id = $2) LIMIT 1`,
      [instanceId, address],
    );
    if (held.length > 0) return null;
    // Rare (a retry after a change, or a number not written to yet): previous keys have no index.
    const [moved] = await rows<Pick<ContactKeys, 'wa_id' | 'user_id'>>(
      this.db,
      `SELECT wa_id, user_id FROM contacts
       WHERE instance_id = $1
         AND $2 = ANY(CASE WHEN $3 THEN previous_wa_ids ELSE previous_user_ids END)
       ORDER BY updated_at DESC LIMIT 1`,
      [instanceId, address, byNumber],
    );
    return moved ?? null;
  }

  /** Ends the pauses whose time is up (each a contact.handoff event); how many. */
  async endExpiredHandoffs(): Promise<number> {
    const ended = await rows(
      this.db,
      `WITH locked AS MATERIALIZED (
         SELECT c.id FROM contacts c WHERE c.handoff_until <= now()
         ORDER BY ${contactOrder('c')} FOR NO KEY UPDATE OF c
       )
       UPDATE contacts c SET handoff_until = NULL, handoff_by = 'timer',
         handoff_reason = 'the pause ended', handoff_account_id = NULL,
         handoff_account_name = NULL, updated_at = now()
       FROM locked WHERE c.id = locked.id AND c.handoff_until <= now() RETURNING c.id`,
    );
    return ended.length;
  }

  /**
   * Opts contacts out (a stop word: their waiting messages wait no more) or
   * back in; the keys of those that changed.
   */
  async setOptOut(
    contactIds: string[],
    optedOut: boolean,
  ): Promise<Array<{ instance_id: string; wa_id: string | null; user_id: string | null }>> {
    if (contactIds.length === 0) return [];
    // One statement with messages.awaiting_turn: no turn claims a message once the opt-out is written.
    return rows(
      this.db,
      `WITH locked AS MATERIALIZED (
         SELECT c.id FROM contacts c WHERE c.id = ANY($1::uuid[])
         ORDER BY ${contactOrder('c')} FOR NO KEY UPDATE OF c
       ), changed AS (
         UPDATE contacts c SET opted_out_at = CASE WHEN $2 THEN now() END, updated_at = now()
         FROM locked WHERE c.id = locked.id AND (c.opted_out_at IS NOT NULL) <> $2
         RETURNING c.id, c.instance_id, c.wa_id, c.user_id
       ), waiting AS (
         UPDATE messages SET awaiting_turn = false
         WHERE $2 AND contact_id = ANY($1::uuid[]) AND awaiting_turn
       )
       SELECT instance_id, wa_id, user_id FROM changed`,
      [contactIds, optedOut],
    );
  }
}
