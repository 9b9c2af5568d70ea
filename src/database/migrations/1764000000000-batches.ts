import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Batches1764000000000 implements MigrationInterface {
  name = 'Batches1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE batches (
        id uuid PRIMARY KEY,
        instance_id uuid NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        contact varchar(32) NOT NULL,
        status varchar(16) NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz
      )`);
    await queryRunner.query(`ALTER TABLE messages ADD COLUMN batch_id uuid`);
    // The buffer: a contact's inbound messages not yet given to the agent.
    await queryRunner.query(
      `CREATE INDEX ix_messages_unbatched ON messages (instance_id, contact, created_at)
       WHERE direction = 'inbound' AND batch_id IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX ix_messages_unbatched`);
    await queryRunner.query(`ALTER TABLE messages DROP COLUMN batch_id`);
    await queryRunner.query(`DROP TABLE batches`);
  }
}
