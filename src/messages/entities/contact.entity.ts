import {
  Column,
  CreateDateColumn,
  Entity,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

/**
 * A person who wrote to (or was written to by) an instance, known by number,
 * by business-scoped user id, or both; last_inbound_at opens the 24-hour
 * service window. Keys are kept straight by mc_resolve_contact and
 * mc_rekey_contact (migration ContactIdentities).
 */
@Entity({ name: 'contacts' })
export class Contact {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  instance_id: string;

  @Column({ type: 'varchar', length: 32, nullable: true })
  wa_id: string | null;

  @Column({ type: 'varchar', length: 128, nullable: true })
  user_id: string | null;

  @Column({ type: 'varchar', length: 128, nullable: true })
  parent_user_id: string | null;

  @Column({ type: 'varchar', length: 256, nullable: true })
  username: string | null;

  @Column({ type: 'varchar', length: 256, nullable: true })
  name: string | null;

  @Column({ type: 'timestamptz', nullable: true })
  last_inbound_at: Date | null;

  /** Numbers and user ids it was known by before a change. */
  @Column({ type: 'text', array: true, default: () => "'{}'" })
  previous_wa_ids: string[];

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  previous_user_ids: string[];

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updated_at: Date;
}
