import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the owner sent from the platform's phone app (coexistence echoes) is
 * stored as sent by `phone_app`, longer than the column took (widening a
 * varchar rewrites nothing); an instance whose number is shared with the
 * phone app knows it (the platform paces such a number at 20 a second).
 */
export class PhoneAppEchoes1795701092507 implements MigrationInterface {
  name = 'PhoneAppEchoes1795701092507';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE messages ALTER COLUMN sent_by TYPE varchar(16)`);
    await queryRunner.query(
      `ALTER TABLE instances ADD COLUMN coexistence boolean NOT NULL DEFAULT false`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE instances DROP COLUMN coexistence`);
    await queryRunner.query(`ALTER TABLE messages ALTER COLUMN sent_by TYPE varchar(8)`);
  }
}
