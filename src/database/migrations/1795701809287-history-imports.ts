import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Past conversations the platform sends after a number shared with the phone
 * app is onboarded (`history`): each chunk once (`history_chunks`, what
 * the instance shows of the import), and its messages marked `imported`:
 * they start no turn, open no window and are no message event.
 */
export class HistoryImports1795701809287 implements MigrationInterface {
  name = 'HistoryImports1795701809287';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE messages ADD COLUMN imported boolean NOT NULL DEFAULT false',
    );
    await queryRunner.query(`
      CREATE TABLE history_chunks (
        instance_id uuid NOT NULL REFERENCES instances(id) ON DELETE CASCADE,
        phase integer NOT NULL,
        chunk_order integer NOT NULL,
        progress integer NOT NULL,
        messages integer NOT NULL,
        stored integer NOT NULL,
        imported_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (instance_id, phase, chunk_order)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE history_chunks');
    await queryRunner.query('ALTER TABLE messages DROP COLUMN imported');
  }
}
