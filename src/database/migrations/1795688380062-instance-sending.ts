import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How fast the platform lets a number send (null: PLATFORM_SEND_RATE; 1,000
 * after its throughput upgrade), and whether its marketing templates go
 * through the platform's marketing messages endpoint.
 */
export class InstanceSending1795688380062 implements MigrationInterface {
  name = 'InstanceSending1795688380062';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE instances
        ADD COLUMN send_rate integer,
        ADD COLUMN marketing_messages boolean NOT NULL DEFAULT false`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE instances DROP COLUMN send_rate, DROP COLUMN marketing_messages`,
    );
  }
}
