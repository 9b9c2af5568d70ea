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

  /** The other party's address as the message named it: a number, or a business-scoped user id. */
  @Column({ type: 'varchar', length: 128 })
  contact: string;

  /** The other party (null on a status that arrived before its send was stored). */
  @Column({ type: 'uuid', nullable: true })
  contact_id: string | null;

  @Column({ type: 'varchar', length: 32 })
  type: string;

  /** Outbound: the request as the client sent it. Inbound: the platform's object. */
  @Column({ type: 'jsonb' })
  body: Record<string, unknown>;

  @Column({ type: 'varchar', length: 16 })
  status: MessageStatus;

  @Column({ type: 'jsonb', nullable: true })
  errors: unknown[] | null;

  /** The turn that gave it to the agent (inbound). */
  @Column({ type: 'uuid', nullable: true })
  turn_id: string | null;

  /** Inbound and not yet in a turn. */
  @Column({ type: 'boolean', default: false })
  awaiting_turn: boolean;

  /** When it reached the webhook; with `seq`, orders messages of the same second. */
  @Column({ type: 'timestamptz' })
  received_at: Date;

  @Column({ type: 'bigint', generated: 'identity', generatedIdentity: 'BY DEFAULT' })
  seq: string;

  /** Inbound: the platform's timestamp. Outbound: when it was stored. */
  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updated_at: Date;
}
