import type { Schemas } from '../api/client';
import { t } from '../i18n';

export type Campaign = Schemas['CampaignDto'];
export type CampaignState = Campaign['state'];

/** States in which a campaign moves by itself: its page reads it again meanwhile. */
export const MOVING: CampaignState[] = ['scheduled', 'running', 'paused'];
/** How often a moving campaign is read again. */
export const POLL_MS = 2000;

const LOOK: Record<CampaignState, string> = {
  draft: '',
  scheduled: 'waiting',
  running: 'open',
  paused: 'waiting',
  completed: 'open',
  cancelled: 'closed',
};

export function StateBadge({ state }: { state: CampaignState }) {
  return <span class={`badge ${LOOK[state]}`}>{t(`campaigns.states.${state}`)}</span>;
}

/** Why a campaign paused, as the language says it (the API's word for one it does not know). */
export const pauseReason = (reason: string): string =>
  t(`campaigns.pauseReasons.${reason}`, { defaultValue: reason });

/** Recipients the campaign is done with: sent, failed or skipped. */
export const doneWith = (campaign: Campaign): number =>
  campaign.progress.sent + campaign.progress.failed + campaign.progress.skipped;

/** How far a campaign is: a bar (the native progress element) and the count it shows. */
export function ProgressBar({
  campaign,
  id,
  wide = false,
}: {
  campaign: Campaign;
  id: string;
  wide?: boolean;
}) {
  const done = doneWith(campaign);
  const total = campaign.recipients;
  const text = t('campaigns.doneOf', { done, total });
  return (
    <span class={`progress${wide ? ' wide' : ''}`}>
      <progress id={id} max={Math.max(total, 1)} value={done} aria-label={text} />
      <span>{text}</span>
    </span>
  );
}
