import {
  Column,
  CreateDateColumn,
  Entity,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

export type MessageDirection = 'outbound' | 'inbound';

/** Delivery states in the order they happen; `failed` stands apart. */
export const MESSAGE_STATUSES = ['sent', 'delivered', 'read', 'failed'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number] | 'received';

/** A message sent through the service (or received by it), keyed by the platform's wamid. */
@Entity({ name: 'messages' })
export class Message {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  instance_id: string;

  @Column({ type: 'varchar', length: 256, unique: true })
  wamid: string;

  @Column({ type: 'varchar', length: 8 })
  direction: MessageDirection;

  /** The other party's wa_id. */
  @Column({ type: 'varchar', length: 32 })
  contact: string;

  @Column({ type: 'varchar', length: 32 })
  type: string;

  /** Outbound: the request as the client sent it. Inbound: the platform's object. */
  @Column({ type: 'jsonb' })
  body: Record<string, unknown>;

  @Column({ type: 'varchar', length: 16 })
  status: MessageStatus;

  @Column({ type: 'jsonb', nullable: true })
  errors: unknown[] | null;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updated_at: Date;
}
