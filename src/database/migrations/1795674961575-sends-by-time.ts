import type { MigrationInterface, QueryRunner } from 'typeorm';
import { buildIndex, dropIndex } from '../concurrent-index.js';

/**
 * The console's overview counts the sends of the last hour: an index of the
 * outbound messages by time (inbound ones, most of the table, stay out of it),
 * built CONCURRENTLY so the service keeps storing messages meanwhile.
 */
export class SendsByTime1795674961575 implements MigrationInterface {
  name = 'SendsByTime1795674961575';
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    await buildIndex(
      queryRunner,
      'ix_messages_sent_at',
      `messages (created_at) WHERE direction = 'outbound'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await dropIndex(queryRunner, 'ix_messages_sent_at');
  }
}
