import {
  Column,
  CreateDateColumn,
  Entity,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

export const TOKEN_TYPES = ['system_user', 'oauth'] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];

export type InstanceStatus = 'connected' | 'disconnected';

/** One connected business phone number. Property names are the API's field names. */
@Entity({ name: 'instances' })
export class Instance {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Column({ type: 'varchar', length: 64, unique: true })
  phone_number_id: string;

  @Column({ type: 'varchar', length: 64 })
  channel_account_id: string;

  @Column({ type: 'varchar', length: 64, nullable: true })
  business_id: string | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  platform_app_id: string | null;

  /** AES-256-GCM ciphertext (CryptoService); never leaves the service. */
  @Column({ type: 'text' })
  access_token_encrypted: string;

  @Column({ type: 'varchar', length: 20 })
  token_type: TokenType;

  @Column({ type: 'varchar', length: 32, nullable: true })
  display_phone_number: string | null;

  @Column({ type: 'varchar', length: 200, nullable: true })
  verified_name: string | null;

  @Column({ type: 'varchar', length: 32, nullable: true })
  quality_rating: string | null;

  @Column({ type: 'varchar', length: 32, nullable: true })
  messaging_limit_tier: string | null;

  @Column({ type: 'boolean', default: true })
  is_active: boolean;

  @Column({ type: 'varchar', length: 20, default: 'connected' })
  status: InstanceStatus;

  @Column({ type: 'varchar', length: 128, unique: true })
  webhook_verify_token: string;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updated_at: Date;
}
