/** What an account may do: everything (admin), or answer the customers of its instances (operator). */
export type AccountRole = 'admin' | 'operator';

export const ACCOUNT_ROLES: readonly AccountRole[] = ['admin', 'operator'];

/** An `accounts` row with its instances (an operator's; an admin's list is empty and unused). */
export interface Account {
  id: string;
  username: string;
  display_name: string;
  role: AccountRole;
  password_hash: string;
  password_changed_at: Date;
  /** Tokens issued before it are void: it moves on a new password and on a disable. */
  sessions_since: Date;
  disabled_at: Date | null;
  created_at: Date;
  updated_at: Date;
  instance_ids: string[];
}

/**
 * A person who logged in, as what they send and the pauses they start record
 * them: the account (null for ADMIN_USERNAME, which has none) and its display
 * name at the time.
 */
export interface PersonRef {
  accountId: string | null;
  displayName: string;
}
