import { useEffect } from 'preact/hooks';
import { api, must } from '../api/client';
import { t } from '../i18n';
import { age, Failure, Page, useLoad } from './ui';

/** How often the overview reads again while it is open. */
const REFRESH_MS = 15_000;

function Card({
  title,
  value,
  detail,
  warn = false,
  href,
}: {
  title: string;
  value: string | number;
  detail?: string;
  warn?: boolean;
  href?: string;
}) {
  const body = (
    <>
      <h2>{title}</h2>
      <p class="value">{value}</p>
      {detail && <p class="muted">{detail}</p>}
    </>
  );
  return (
    <section class={`card${warn ? ' warn' : ''}`} aria-label={title}>
      {href ? <a href={href}>{body}</a> : body}
    </section>
  );
}

export default function Overview() {
  const { data, error, reload } = useLoad(async () => must(await api.GET('/admin/overview')));
  useEffect(() => {
    const timer = window.setInterval(reload, REFRESH_MS);
    return () => window.clearInterval(timer);
  }, [reload]);
  const state = (healthy: boolean) => (healthy ? t('overview.healthy') : t('overview.unhealthy'));
  return (
    <Page
      title={t('nav.overview')}
      actions={
        <button type="button" class="secondary" onClick={reload}>
          {t('admin.refresh')}
        </button>
      }
    >
      <Failure error={error} />
      {data && (
        <div class="cards">
          {(['database', 'cache', 'platform_api'] as const).map((name) => (
            <Card
              key={name}
              title={t(`overview.health.${name}`)}
              value={state(data.health[name] === 'healthy')}
              warn={data.health[name] !== 'healthy'}
            />
          ))}
          <Card
            title={t('nav.instances')}
            value={`${data.instances.active} / ${data.instances.total}`}
            detail={
              data.instances.token_rejected > 0
                ? t('overview.tokenRejected', { count: data.instances.token_rejected })
                : t('overview.active')
            }
            warn={data.instances.token_rejected > 0}
            href="/console/instances"
          />
          <Card
            title={t('overview.waiting')}
            value={data.messages_waiting.count}
            detail={
              data.messages_waiting.count > 0
                ? t('overview.oldest', { age: age(data.messages_waiting.oldest_age_s) })
                : undefined
            }
          />
          <Card
            title={t('overview.undelivered')}
            value={data.events_undelivered.count}
            detail={
              data.events_undelivered.count > 0
                ? t('overview.oldest', { age: age(data.events_undelivered.oldest_age_s) })
                : undefined
            }
            href="/console/events"
          />
          <Card title={t('overview.sends')} value={data.sends_last_hour} />
          <Card
            title={t('nav.turns')}
            value={data.failed_turns}
            warn={data.failed_turns > 0}
            href="/console/turns"
          />
        </div>
      )}
    </Page>
  );
}
