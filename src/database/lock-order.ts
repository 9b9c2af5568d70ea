/**
 * The one order in which the service's statements and triggers lock the rows
 * several writers share; a transaction that keeps to it may wait for another
 * but never deadlocks with it:
 *
 * 0. an instance's contact keys (an advisory lock, `lockContactKeys`): taken
 *    by whatever may link, merge or move a contact's keys (a number or user-id
 *    change, an identity whose keys sit on two rows), before any contact row;
 *    and a history chunk's (`HistoryStore.importChunk`), taken by its imports
 *    only, before its messages;
 * 1. `contacts` rows, by ascending `id`: all that a statement will write,
 *    before anything below (`mc_lock_contacts`, which the message triggers
 *    call first, and the contact statements' ORDER BY);
 * 2. `event_subscriptions` rows: the KEY SHARE the lanes' and deliveries'
 *    foreign keys take, taken first by the fan-out (`mc_events_fan_out`) and
 *    by the dispatcher's finish (its counters' trigger updates lanes the
 *    statement wrote, whose keys PostgreSQL checks again), a finish's recovery
 *    of a failing subscription, and an admin's delete (FOR UPDATE: it waits
 *    for those in flight);
 * 3. `event_lanes` rows, by ascending `(subscription_id, lane)`: the lane
 *    counters' triggers, which every event reaches through its fan-out, the
 *    dispatcher's finish, and an admin parking, waking or deleting a
 *    subscription's lanes;
 * 4. `event_deliveries` rows: a finish's attempts, an admin's retry and a
 *    delete's cascade, after their lanes (a fan-out's, a replay's or a
 *    ping's new rows are nobody else's yet).
 *
 * The writers that meet on them: an inbound batch (its contacts brought
 * forward, then its messages and their events), an outbound record (its
 * contacts' last send, then its events), a status batch (its events), the
 * contact statements that change several contacts (a person's sends pausing
 * the agent, the timer ending pauses, opt-outs), the dispatcher finishing
 * its lanes, and an admin changing or deleting a subscription. So that a
 * statement's events take their lanes in one sorted step, the triggers on
 * `messages` and `contacts` write them a statement at a time, and a statement
 * fires only one of them: an INSERT … ON CONFLICT DO UPDATE fires the
 * update's and then the insert's, so the stores write new rows and existing
 * ones in two statements. The row-level event triggers left
 * (a turn failing, an instance's status, a template's) belong to statements
 * that change one row.
 *
 * What is left outside it: pruning deletes old events, and with them their
 * deliveries before the lanes' counters; only a delivery still pending after
 * EVENT_RETENTION_DAYS could meet a finish there, and PostgreSQL would then
 * end one of the two (each is tried again). And a message insert's
 * foreign-key check takes a KEY SHARE lock on its contact in row order, before
 * the statement's triggers run.
 * It conflicts only with FOR UPDATE, which a link, merge or move takes on the
 * rows it writes (after level 0, in id order): a batch of sends to both
 * contacts of a person being merged can still meet it in the other order.
 * Rare; PostgreSQL then ends one of the two and its batch is tried again.
 */

/** The `ORDER BY` of a statement that locks contacts; `alias` names the table. */
export const contactOrder = (alias: string): string => `${alias}.id`;

/** The `ORDER BY` of the lanes: columns named as in `event_lanes`. */
export const LANE_ORDER = 'subscription_id, lane';

/** The same, for a statement that names `event_lanes` by `alias`. */
export const laneOrder = (alias: string): string =>
  LANE_ORDER.split(', ')
    .map((column) => `${alias}.${column}`)
    .join(', ');

/**
 * The SQL that takes an instance's contact-keys lock (level 0) for the rest of
 * the transaction; `instance` is an SQL expression of its id.
 */
export const lockContactKeys = (instance: string): string =>
  `pg_advisory_xact_lock(hashtextextended('mc-contacts:' || ${instance}::text, 0))`;
