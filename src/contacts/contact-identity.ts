/**
 * How a person is known on the platform: a number (wa_id), a business-scoped
 * user id, or both. Since 2026 every user has a user id; one who hides the
 * number behind a username is known by it alone.
 */
export interface Identity {
  waId: string | null;
  userId: string | null;
}

/** An identity change announced by a system message: the old keys become the new ones. */
export interface IdentityChange {
  old: Identity;
  new: Identity & { parentUserId: string | null };
}

/** The contact an identity stands for, with what the delivery says of it. */
export interface IdentityRow extends Identity {
  /** Groups the messages of one identity. */
  key: string;
  parentUserId: string | null;
  username: string | null;
  name: string | null;
  /** The latest message time (capped at its arrival): it opens the service window. Null for system messages. */
  lastInboundAt: Date | null;
}

export function identityKey(identity: Identity): string {
  return `${identity.waId ?? ''}|${identity.userId ?? ''}`;
}
