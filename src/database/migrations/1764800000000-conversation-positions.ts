import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A conversation is listed in arrival order and followed in commit order.
 *
 * Arrival order is the agent's: the second of the message's time (the
 * platform's timestamp, whole seconds; a send: when it was recorded), then
 * when it reached the service (its delivery at the webhook; a send: when
 * recorded), then `seq`. Parallel readers store deliveries out of that
 * order, so `seq` alone listed a late-stored message after a later one.
 *
 * Following (`after`) needs a position that never lands behind a message not
 * yet visible: `seq` is taken at insert, not at commit, so a slower
 * transaction's message could appear below a cursor already handed out.
 * `stored_tx` is the transaction that stored the message (or moved it to its
 * contact); a follower is handed only positions below its snapshot's
 * horizon (the oldest transaction of the database still in flight), below
 * which no message can still be stored.
 *
 * Safe for a running service: the column comes with a constant default (rows
 * already stored read as 0, "long ago", without a rewrite); only then does
 * the default become the inserting transaction. The table lock is held only
 * for these catalog changes, and waited for at most LOCK_TIMEOUT: queued
 * behind a long transaction it would block every query on `messages`; given
 * up, the migration is rolled back and the next start (or the Job's next
 * attempt) runs it again. The indexes it needs are built concurrently, by
 * ConversationIndexes1764860000000.
 */
const LOCK_TIMEOUT = '5s';

export class ConversationPositions1764800000000 implements MigrationInterface {
  name = 'ConversationPositions1764800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const q = (sql: string) => queryRunner.query(sql);
    await q(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
    await q(`ALTER TABLE messages ADD COLUMN stored_tx xid8 NOT NULL DEFAULT '0'`);
    await q(`ALTER TABLE messages ALTER COLUMN stored_tx SET DEFAULT pg_current_xact_id()`);
    // A message that joins a contact later (a status placeholder its send completes, a merge
    // of two contacts) is new to whoever follows that contact: it moves to the mover's position.
    await q(
      '\n      CREATE FUNCTION mc_message_moved() RETURNS trigger LANGUAGE plpgsql AS $$\n      BEGIN\n        NEW.stored_tx := pg_current_xact_id();\n        RETURN NEW;\n      END $$',
    );
    await q(
      '\n      CREATE TRIGGER tr_message_moved BEFORE UPDATE OF contact_id ON messages\n      FOR EACH ROW WHEN (NEW.contact_id IS NOT NULL AND OLD.contact_id IS DISTINCT FROM NEW.contact_id)\n      EXECUTE FUNCTION mc_message_moved()',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const q = (sql: string) => queryRunner.query(sql);
    await q(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
    await q(`DROP TRIGGER tr_message_moved ON messages`);
    await q(`DROP FUNCTION mc_message_moved()`);
    await q(`ALTER TABLE messages DROP COLUMN stored_tx`);
  }
}
