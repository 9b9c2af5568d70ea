import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** A user who wrote to an instance; last_inbound_at opens the 24-hour service window. */
@Entity({ name: 'contacts' })
export class Contact {
  @PrimaryColumn({ type: 'uuid' })
  instance_id: string;

  @PrimaryColumn({ type: 'varchar', length: 32 })
  wa_id: string;

  @Column({ type: 'varchar', length: 128, nullable: true })
  user_id: string | null;

  @Column({ type: 'varchar', length: 256, nullable: true })
  name: string | null;

  @Column({ type: 'timestamptz', nullable: true })
  last_inbound_at: Date | null;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updated_at: Date;
}
