import type { MigrationInterface, QueryRunner } from 'typeorm';

export class MessagesAndContacts1763827200000 implements MigrationInterface {
  name = 'MessagesAndContacts1763827200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE contacts (
        instance_id uuid NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        wa_id varchar(32) NOT NULL,
        user_id varchar(128),
        name varchar(256),
        last_inbound_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (instance_id, wa_id)
      )`);
    await queryRunner.query(`
      CREATE TABLE messages (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        wamid varchar(256) NOT NULL,
        direction varchar(8) NOT NULL,
        contact varchar(32) NOT NULL,
        type varchar(32) NOT NULL,
        body jsonb NOT NULL,
        status varchar(16) NOT NULL,
        errors jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_messages_wamid UNIQUE (wamid)
      )`);
    await queryRunner.query(
      `CREATE INDEX ix_messages_instance_contact ON messages (instance_id, contact, created_at)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE messages`);
    await queryRunner.query(`DROP TABLE contacts`);
  }
}
