import type { SendComponent } from '../templates/template-params.js';

export const CAMPAIGN_STATES = [
  'draft',
  'scheduled',
  'running',
  'paused',
  'completed',
  'cancelled',
] as const;
export type CampaignState = (typeof CAMPAIGN_STATES)[number];

export const RECIPIENT_STATES = [
  'queued',
  'claimed',
  'sending',
  'sent',
  'failed',
  'skipped',
] as const;
export type RecipientState = (typeof RECIPIENT_STATES)[number];

/**
 * Which states each action moves a campaign from, and to. `start` and
 * `resume` go to `scheduled` instead while the start time is ahead.
 */
export const CAMPAIGN_ACTIONS = {
  start: { from: ['draft'], to: 'running' },
  pause: { from: ['scheduled', 'running'], to: 'paused' },
  resume: { from: ['paused'], to: 'running' },
  cancel: { from: ['draft', 'scheduled', 'running', 'paused'], to: 'cancelled' },
} as const satisfies Record<string, { from: readonly CampaignState[]; to: CampaignState }>;
export type CampaignAction = keyof typeof CAMPAIGN_ACTIONS;

/** Why a campaign paused by itself (or `requested`: someone paused it). */
export type PauseReason =
  | 'requested'
  | 'token_rejected'
  | 'instance_inactive'
  | 'template_paused'
  | 'template_disabled'
  | 'template_not_approved'
  | 'template_not_found'
  | 'template_parameter_mismatch'
  | 'template_category_changed';

export interface Campaign {
  id: string;
  instance_id: string;
  name: string;
  template_id: string;
  template_name: string;
  template_language: string;
  template_category: string | null;
  components: SendComponent[];
  state: CampaignState;
  pause_reason: string | null;
  start_at: Date | null;
  rate_per_s: number | null;
  recipients: number;
  duplicates: number;
  invalid: number;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

/** A recipient as a campaign is created with it. */
export interface NewRecipient {
  to?: string;
  recipient?: string;
  parameters?: Record<string, string>;
}

export interface CampaignRecipient {
  campaign_id: string;
  seq: number;
  to_number: string | null;
  user_id: string | null;
  parameters: Record<string, string> | null;
  state: RecipientState;
  reason: string | null;
  error_code: number | null;
  error_message: string | null;
  wamid: string | null;
  sent_at: Date | null;
  /** Tries the platform refused that looked like its own fault (not an outage, not throttling). */
  attempts: number;
  /** Not sent again before this (throttled or unavailable). */
  retry_at: Date | null;
  /** The sent message's status as the platform last reported it (sent, delivered, read, failed). */
  delivery?: string | null;
}

/** What a campaign came to so far; every recipient is in exactly one of the first five. */
export interface CampaignProgress {
  queued: number;
  sending: number;
  sent: number;
  failed: number;
  skipped: number;
  /** Of the sent: as far as the platform's statuses have come. */
  delivered: number;
  read: number;
  /** Of the sent: wrote back after the send. */
  replied: number;
  failed_by_code: Record<string, number>;
  skipped_by_reason: Record<string, number>;
}
