import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which api processes hold live streams (GET /live) of which instances: the
 * triggers notify (mc_live_notify) only for an instance one of them watches,
 * so a database nobody watches pays nothing more than an empty lookup per
 * statement. Each process renews its rows while it streams and deletes them
 * when it stops; a row of a process that died without deleting expires.
 * Unlogged: after a crash the table is empty, and the processes write their
 * rows again on their next renewal.
 */
export class LiveListeners1795661709573 implements MigrationInterface {
  name = 'LiveListeners1795661709573';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE UNLOGGED TABLE live_listeners (
        instance_id uuid NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        process_id uuid NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (instance_id, process_id)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE live_listeners`);
  }
}
