import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A client API key. Only its SHA-256 hash is kept; the key itself is shown once. */
@Entity({ name: 'api_keys' })
export class ApiKey {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  /** Set: the key works for this instance only. Deleted with the instance. */
  @Column({ type: 'uuid', nullable: true })
  instance_id: string | null;

  @Column({ type: 'char', length: 64, unique: true, select: false })
  key_hash: string;

  /** The first characters of the key, so an admin can tell keys apart. */
  @Column({ type: 'varchar', length: 16 })
  prefix: string;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;

  @Column({ type: 'timestamptz', nullable: true })
  last_used_at: Date | null;
}
