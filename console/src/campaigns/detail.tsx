import { useEffect } from 'preact/hooks';
import { api, must } from '../api/client';
import { At, Failure, Page, useAction, useLoad } from '../admin/ui';
import { language, t } from '../i18n';
import { InstancePicker, shownInstance } from '../instance';
import { session } from '../session';
import {
  MOVING,
  pauseReason,
  POLL_MS,
  ProgressBar,
  StateBadge,
  type Campaign,
  type CampaignState,
} from './progress';
import { Recipients } from './recipients';

type Action = 'start' | 'pause' | 'resume' | 'cancel';

/** What a person may ask of a campaign in each state (the API's transitions). */
const ACTIONS: Record<CampaignState, Action[]> = {
  draft: ['start', 'cancel'],
  scheduled: ['pause', 'cancel'],
  running: ['pause', 'cancel'],
  paused: ['resume', 'cancel'],
  completed: [],
  cancelled: [],
};

/** Counts by key (failures by code, skips by reason), or nothing. */
function Breakdown({
  title,
  counts,
  label,
}: {
  title: string;
  counts: Record<string, number>;
  label: (key: string) => string;
}) {
  const entries = Object.entries(counts).filter(([, n]) => n > 0);
  if (entries.length === 0) return null;
  return (
    <div>
      <h3>{title}</h3>
      <ul class="breakdown">
        {entries.map(([key, n]) => (
          <li key={key}>
            {label(key)}: <strong>{n}</strong>
          </li>
        ))}
      </ul>
    </div>
  );
}

function Progress({ campaign }: { campaign: Campaign }) {
  const p = campaign.progress;
  const counts: Array<[string, number]> = [
    ['queued', p.queued],
    ['sending', p.sending],
    ['sent', p.sent],
    ['delivered', p.delivered],
    ['read', p.read],
    ['replied', p.replied],
    ['failed', p.failed],
    ['skipped', p.skipped],
  ];
  return (
    <section class="panel" aria-labelledby="progress-title">
      <h2 id="progress-title">{t('campaigns.progress')}</h2>
      <ProgressBar campaign={campaign} id="campaign-progress" wide />
      <dl class="counts">
        {counts.map(([key, n]) => (
          <div key={key} data-count={key}>
            <dt>{t(`campaigns.counts.${key}`)}</dt>
            <dd>{n}</dd>
          </div>
        ))}
      </dl>
      <Breakdown
        title={t('campaigns.failedByCode')}
        counts={p.failed_by_code}
        label={(code) => t(`campaigns.reasons.${code}`, { defaultValue: code })}
      />
      <Breakdown
        title={t('campaigns.skippedByReason')}
        counts={p.skipped_by_reason}
        label={(reason) => t(`campaigns.reasons.${reason}`, { defaultValue: reason })}
      />
    </section>
  );
}

/** A campaign: live progress (read every 2 s while it moves), its actions and its recipients. */
export function CampaignDetail({ id }: { id: string }) {
  const instance = shownInstance(session.value!);
  const { data, error, reload } = useLoad(async () => {
    if (!instance) return undefined;
    return must(
      await api.GET('/campaigns/{id}', {
        params: { path: { id }, query: { instance_id: instance } },
      }),
    );
  }, [id, instance]);
  const moving = data ? MOVING.includes(data.state) : false;
  useEffect(() => {
    if (!moving) return;
    const timer = window.setInterval(reload, POLL_MS);
    return () => window.clearInterval(timer);
  }, [moving, reload]);

  const action = useAction();
  const act = (what: Action) => {
    if (what === 'cancel' && !window.confirm(t('campaigns.confirmCancel', { name: data?.name })))
      return;
    void action.run(async () => {
      try {
        must(
          await api.POST('/campaigns/{id}/{action}', {
            params: { path: { id, action: what } },
            body: { instance_id: instance! },
          }),
        );
      } finally {
        // Done or refused (it moved meanwhile): the page shows the campaign as it is now.
        reload();
      }
    });
  };
  // A refused action: the campaign moved meanwhile (paused by itself, completed).
  const stated = action.details[0]?.state;
  const conflictState = typeof stated === 'string' ? stated : '';
  const conflict =
    action.code === 'campaign_state_conflict'
      ? t('campaigns.conflict', {
          state: t(`campaigns.states.${conflictState}`, {
            defaultValue: conflictState,
          }).toLocaleLowerCase(language.value),
        })
      : null;

  return (
    <Page
      title={data?.name ?? t('campaigns.campaign')}
      actions={<InstancePicker session={session.value!} />}
    >
      <p>
        <a href="/console/campaigns">← {t('nav.campaigns')}</a>
      </p>
      <Failure error={error} />
      {data && (
        <>
          <section class="panel" aria-labelledby="campaign-state">
            <h2 id="campaign-state">{t('campaigns.state')}</h2>
            <p>
              <StateBadge state={data.state} />
            </p>
            {data.state === 'running' && data.waiting_for === 'daily_limit' && (
              <p class="warning" role="status">
                {t('campaigns.waitingDailyLimit')}
              </p>
            )}
            {data.state === 'paused' && data.pause_reason && (
              <p class="warning" role="status">
                {t('campaigns.pausedBecause', { reason: pauseReason(data.pause_reason) })}
              </p>
            )}
            <dl class="facts">
              <dt>{t('campaigns.template')}</dt>
              <dd>
                {data.template.name} <span class="muted">{data.template.language}</span>
              </dd>
              <dt>{t('campaigns.recipients')}</dt>
              <dd>
                {data.recipients}
                {(data.duplicates > 0 || data.invalid > 0) && (
                  <span class="muted">
                    {' '}
                    ·{' '}
                    {t('campaigns.leftOut', { duplicates: data.duplicates, invalid: data.invalid })}
                  </span>
                )}
              </dd>
              <dt>{t('campaigns.rate')}</dt>
              <dd>{data.rate_per_s ?? t('campaigns.asFast')}</dd>
              <dt>{t('campaigns.startAt')}</dt>
              <dd>
                <At iso={data.start_at} />
              </dd>
              <dt>{t('campaigns.startedAt')}</dt>
              <dd>
                <At iso={data.started_at} />
              </dd>
              <dt>{t('campaigns.finishedAt')}</dt>
              <dd>
                <At iso={data.finished_at} />
              </dd>
            </dl>
            {ACTIONS[data.state].length > 0 && (
              <div class="row">
                {ACTIONS[data.state].map((what) => (
                  <button
                    key={what}
                    type="button"
                    class={
                      what === 'cancel' ? 'danger' : what === 'pause' ? 'secondary' : undefined
                    }
                    disabled={action.busy}
                    onClick={() => act(what)}
                  >
                    {t(`campaigns.actions.${what}`)}
                  </button>
                ))}
              </div>
            )}
            {conflict ? (
              <p class="error" role="alert">
                {conflict} <span class="muted">({action.error})</span>
              </p>
            ) : (
              <Failure error={action.error} />
            )}
          </section>
          <Progress campaign={data} />
          {instance && (
            <Recipients id={id} instance={instance} round={JSON.stringify(data.progress)} />
          )}
        </>
      )}
    </Page>
  );
}
