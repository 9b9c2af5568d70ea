import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a person who logged in does is recorded as theirs: a message they
 * sent (`sent_by = 'person'`) and a pause they started or ended
 * (`handoff_by = 'person'`) keep the account's id and its display name as it
 * was then (a later rename does not rewrite the past). ADMIN_USERNAME has no
 * account row: its id stays null, its name is its username.
 */
export class PeopleWhoSend1795660829636 implements MigrationInterface {
  name = 'PeopleWhoSend1795660829636';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE messages ADD COLUMN sent_by_account_id uuid,
         ADD COLUMN sent_by_account_name varchar(200)`,
    );
    await queryRunner.query(
      `ALTER TABLE contacts ADD COLUMN handoff_account_id uuid,
         ADD COLUMN handoff_account_name varchar(200)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE contacts DROP COLUMN handoff_account_id, DROP COLUMN handoff_account_name`,
    );
    await queryRunner.query(
      `ALTER TABLE messages DROP COLUMN sent_by_account_id, DROP COLUMN sent_by_account_name`,
    );
  }
}
