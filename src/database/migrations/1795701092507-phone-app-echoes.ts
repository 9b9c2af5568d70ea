import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the owner sent from the platform's phone app (coexistence echoes) is
 * stored as sent by `phone_app`, longer than the column took. Widening a
 * varchar rewrites nothing.
 */
export class PhoneAppEchoes1795701092507 implements MigrationInterface {
  name = 'PhoneAppEchoes1795701092507';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE messages ALTER COLUMN sent_by TYPE varchar(16)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE messages ALTER COLUMN sent_by TYPE varchar(8)`);
  }
}
