import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Where a person last read a contact's conversation (POST
 * /contacts/{key}/read): the oldest transaction still running then. The
 * inbox counts the customer's messages stored from it on as unread (by the
 * conversation's stored-order index; a message's own time is the customer's
 * clock, which may be hours behind its arrival). One mark per contact,
 * shared by the people of the number, as the platform's business app keeps
 * one per chat. A nullable column without a default: adding it rewrites
 * nothing.
 */
export class ContactsRead1795677110849 implements MigrationInterface {
  name = 'ContactsRead1795677110849';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE contacts ADD COLUMN read_tx xid8`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE contacts DROP COLUMN read_tx`);
  }
}
