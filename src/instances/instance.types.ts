export const TOKEN_TYPES = ['system_user', 'oauth'] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];

export type InstanceStatus = 'connected' | 'disconnected';

/** One connected business phone number (a row of `instances`). Property names are the API's field names. */
export interface Instance {
  id: string;
  name: string;
  phone_number_id: string;
  channel_account_id: string;
  business_id: string | null;
  platform_app_id: string | null;
  /** AES-256-GCM ciphertext (CryptoService); never leaves the service. */
  access_token_encrypted: string;
  token_type: TokenType;
  display_phone_number: string | null;
  verified_name: string | null;
  quality_rating: string | null;
  messaging_limit_tier: string | null;
  is_active: boolean;
  status: InstanceStatus;
  webhook_verify_token: string;
  /** When the platform refused the access token (code 190); cleared by a new token. */
  token_rejected_at: Date | null;
  created_at: Date;
  updated_at: Date;
}
