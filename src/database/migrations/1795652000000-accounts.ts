import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * People who log in: admins besides ADMIN_USERNAME, and operators, who answer
 * customers of the instances listed for them (`account_instances`). A
 * password is stored as its argon2id hash (PHC string). `sessions_since`
 * moves on a new password and on a disable: the tokens issued before it end
 * (a token carries a stamp of it), and re-enabling brings none of them back.
 */
export class Accounts1795652000000 implements MigrationInterface {
  name = 'Accounts1795652000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE accounts (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        username varchar(100) NOT NULL,
        display_name varchar(200) NOT NULL,
        role varchar(10) NOT NULL CHECK (role IN ('admin', 'operator')),
        password_hash varchar(200) NOT NULL,
        password_changed_at timestamptz NOT NULL DEFAULT now(),
        sessions_since timestamptz NOT NULL DEFAULT now(),
        disabled_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX uq_accounts_username ON accounts (lower(username))`,
    );
    await queryRunner.query(`
      CREATE TABLE account_instances (
        account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        instance_id uuid NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        PRIMARY KEY (account_id, instance_id)
      )`);
    await queryRunner.query(
      `CREATE INDEX ix_account_instances_instance ON account_instances (instance_id)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE account_instances`);
    await queryRunner.query(`DROP TABLE accounts`);
  }
}
