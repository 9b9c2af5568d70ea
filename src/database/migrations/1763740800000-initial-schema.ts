import type { MigrationInterface, QueryRunner } from 'typeorm';

export class InitialSchema1763740800000 implements MigrationInterface {
  name = 'InitialSchema1763740800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE instances (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name varchar(200) NOT NULL,
        phone_number_id varchar(64) NOT NULL,
        channel_account_id varchar(64) NOT NULL,
        business_id varchar(64),
        platform_app_id varchar(64),
        access_token_encrypted text NOT NULL,
        token_type varchar(20) NOT NULL,
        display_phone_number varchar(32),
        verified_name varchar(200),
        quality_rating varchar(32),
        messaging_limit_tier varchar(32),
        is_active boolean NOT NULL DEFAULT true,
        status varchar(20) NOT NULL DEFAULT 'connected',
        webhook_verify_token varchar(128) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_instances_phone_number_id UNIQUE (phone_number_id),
        CONSTRAINT uq_instances_webhook_verify_token UNIQUE (webhook_verify_token)
      )`);
    await queryRunner.query(
      `CREATE INDEX ix_instances_channel_account_id ON instances (channel_account_id)`,
    );
    await queryRunner.query(`
      CREATE TABLE api_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name varchar(200) NOT NULL,
        instance_id uuid REFERENCES instances (id) ON DELETE CASCADE,
        key_hash char(64) NOT NULL,
        prefix varchar(16) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        CONSTRAINT uq_api_keys_key_hash UNIQUE (key_hash)
      )`);
    await queryRunner.query(`CREATE INDEX ix_api_keys_instance_id ON api_keys (instance_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE api_keys`);
    await queryRunner.query(`DROP TABLE instances`);
  }
}
