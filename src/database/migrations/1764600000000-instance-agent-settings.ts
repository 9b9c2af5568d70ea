import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-instance agent settings: an instance may use its own agent (URL and
 * token, the token encrypted like the access token), its own buffer timing and
 * typing indicator, or no agent at all. Null: the global setting.
 */
export class InstanceAgentSettings1764600000000 implements MigrationInterface {
  name = 'InstanceAgentSettings1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE instances
        ADD COLUMN agent_enabled boolean NOT NULL DEFAULT true,
        ADD COLUMN agent_url text,
        ADD COLUMN agent_token_encrypted text,
        ADD COLUMN agent_buffer_delay_s real,
        ADD COLUMN agent_buffer_max_wait_s real,
        ADD COLUMN agent_typing_indicator boolean`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE instances DROP COLUMN agent_enabled, DROP COLUMN agent_url,
        DROP COLUMN agent_token_encrypted, DROP COLUMN agent_buffer_delay_s,
        DROP COLUMN agent_buffer_max_wait_s, DROP COLUMN agent_typing_indicator`);
  }
}
