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
  /** false: the agent never answers this number (messages are stored only). */
  agent_enabled: boolean;
  /** This number's own agent, and its token (AES-256-GCM, like the access token); null: the global ones. */
  agent_url: string | null;
  agent_token_encrypted: string | null;
  /** Null: MESSAGE_BUFFER_DELAY, MESSAGE_BUFFER_MAX_WAIT, AGENT_TYPING_INDICATOR. */
  agent_buffer_delay_s: number | null;
  agent_buffer_max_wait_s: number | null;
  agent_typing_indicator: boolean | null;
  /** Messages a second the platform allows the number (1,000 after its throughput upgrade); null: PLATFORM_SEND_RATE. */
  send_rate: number | null;
  /** Marketing templates of campaigns go through the platform's marketing messages endpoint. */
  marketing_messages: boolean;
  /** The business's daily limit on customers it starts conversations with (business_capability_update); null: none known. */
  daily_limit: number | null;
  /** The number is shared with the platform's phone app (its echoes, history or contacts came). */
  coexistence: boolean;
  created_at: Date;
  updated_at: Date;
}

/** The agent an instance's messages go to, settings resolved (its own, else the global ones). */
export interface AgentSettings {
  /** Whether its inbound messages wait for the agent at all. */
  enabled: boolean;
  url: string | undefined;
  /** The instance's own URL (an admin's, checked by TargetGuard), not AGENT_MODULE_URL. */
  guarded: boolean;
  /** The decrypted bearer token. */
  token: string | undefined;
  delayMs: number;
  maxWaitMs: number;
  typing: boolean;
}

/** How fast the platform lets a number shared with its phone app send. */
export const COEXISTENCE_RATE = 20;

/**
 * The messages a second a number is paced to: its own rate (null:
 * PLATFORM_SEND_RATE), at most 20 while it is shared with the phone app.
 */
export function numberRate(
  instance: Pick<Instance, 'send_rate' | 'coexistence'>,
  /** PLATFORM_SEND_RATE: a shared number is never paced above it either. */
  configured: number,
): number | null {
  return instance.coexistence
    ? Math.min(COEXISTENCE_RATE, instance.send_rate ?? configured)
    : instance.send_rate;
}
