/**
 * A person who wrote to (or was written to by) an instance, known by number,
 * by business-scoped user id, or both; last_inbound_at opens the 24-hour
 * service window. Keys are kept straight by mc_resolve_contact and
 * mc_rekey_contact (contacts/contact.functions.sql.ts). A row of `contacts`.
 */
export interface Contact {
  id: string;
  instance_id: string;
  wa_id: string | null;
  user_id: string | null;
  parent_user_id: string | null;
  username: string | null;
  name: string | null;
  last_inbound_at: Date | null;
  /** Numbers and user ids it was known by before a change. */
  previous_wa_ids: string[];
  previous_user_ids: string[];
  /** When the last send to it was recorded. */
  last_outbound_at: Date | null;
  /** The latest imported history message (coexistence): dates the activity, not the window. */
  last_imported_at: Date | null;
  /** The latest of the three above (mc_contact_activity); the epoch when none. */
  last_activity_at: Date;
  /** While in the future, the agent is paused for this contact (a person took over). */
  handoff_until: Date | null;
  handoff_since: Date | null;
  handoff_reason: string | null;
  /** Who paused or resumed it last: api, admin, person, agent, auto (a person's send), timer. */
  handoff_by: string | null;
  /** The person who did (handoff_by person, or auto for a person's send): their account and name. */
  handoff_account_id: string | null;
  handoff_account_name: string | null;
  /** Set while the contact has opted out (a stop word): only templates may be sent. */
  opted_out_at: Date | null;
  /** Stopped marketing messages in the app (user_preferences, or a send refused with 131050). */
  marketing_opted_out_at: Date | null;
  /** The time of the last marketing preference applied. */
  marketing_pref_at: Date | null;
  /** The name in the owner's phone address book (coexistence), apart from the profile's. */
  phone_name: string | null;
  /** The time of the phone book entry that last set phone_name. */
  phone_name_at: Date | null;
  /** Where a person last read its conversation: the stored position (stored_tx, seq) of the newest message they saw. */
  read_tx: string | null;
  read_seq: string | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * Who changes a contact's handoff: a client, an admin (its route), a person
 * who logged in, the agent, a send by a client or a person, the clock.
 */
export const HANDOFF_BY = ['api', 'admin', 'person', 'agent', 'auto', 'timer'] as const;
export type HandoffBy = (typeof HANDOFF_BY)[number];

/** A contact's keys and profile, as the agent and the client see them. */
export type ContactKeys = Pick<
  Contact,
  'wa_id' | 'user_id' | 'parent_user_id' | 'username' | 'name'
>;

/** The states GET /contacts filters by (`state`). */
export const CONTACT_STATES = ['waiting', 'paused', 'agent', 'window_open', 'opted_out'] as const;
export type ContactState = (typeof CONTACT_STATES)[number];

/** One pause of a contact's handoff history (contact_handoffs). */
export interface HandoffRecord {
  since: Date;
  until: Date | null;
  by: HandoffBy | null;
  reason: string | null;
  account_name: string | null;
  /** When it was ended before its time, and by whom (null: it ran out, or runs now). */
  ended_at: Date | null;
  ended_by: HandoffBy | null;
}
