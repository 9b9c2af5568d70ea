import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Where a person last read a contact's conversation (POST
 * /contacts/{key}/read): the stored position (`stored_tx`, `seq`) of the
 * newest message they had on screen. The inbox counts the customer's
 * messages stored after it as unread, by the conversation's stored-order
 * index (a message's own time is the customer's clock, which may be hours
 * behind its arrival). One mark per contact, shared by the people of the
 * number, as the platform's business app keeps one per chat. Nullable
 * columns without a default: adding them rewrites nothing, and the lock is
 * asked for with a bound on the wait.
 */
export class ContactsRead1795677110849 implements MigrationInterface {
  name = 'ContactsRead1795677110849';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`SET LOCAL lock_timeout = '5s'`);
    await queryRunner.query(
      `ALTER TABLE contacts ADD COLUMN read_tx xid8, ADD COLUMN read_seq int8`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE contacts DROP COLUMN read_tx, DROP COLUMN read_seq`);
  }
}
