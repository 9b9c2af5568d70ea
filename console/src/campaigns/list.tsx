import { useEffect } from 'preact/hooks';
import { api, must } from '../api/client';
import { At, Failure, Page, Table, useLoad, usePages } from '../admin/ui';
import { t } from '../i18n';
import { InstancePicker, shownInstance } from '../instance';
import { session } from '../session';
import { MOVING, POLL_MS, ProgressBar, StateBadge } from './progress';

/** The chosen instance's campaigns, newest first; read again while one of them moves. */
export function Campaigns() {
  const instance = shownInstance(session.value!);
  const { cursor, pager } = usePages();
  const { data, error, reload } = useLoad(async () => {
    if (!instance) return undefined;
    return must(
      await api.GET('/campaigns', {
        params: { query: { instance_id: instance, limit: 25, ...(cursor ? { cursor } : {}) } },
      }),
    );
  }, [instance, cursor]);
  const moving = data?.data.some((campaign) => MOVING.includes(campaign.state)) ?? false;
  useEffect(() => {
    if (!moving) return;
    const timer = window.setInterval(reload, POLL_MS);
    return () => window.clearInterval(timer);
  }, [moving, reload]);

  return (
    <Page
      title={t('nav.campaigns')}
      actions={
        <div class="row">
          <InstancePicker session={session.value!} />
          <a class="button" href="/console/campaigns/new">
            {t('campaigns.new')}
          </a>
        </div>
      }
    >
      <Failure error={error} />
      {data && (
        <Table
          columns={[
            t('campaigns.name'),
            t('campaigns.template'),
            t('campaigns.state'),
            t('campaigns.progress'),
            t('admin.created'),
          ]}
          items={data.data}
          empty={t('campaigns.none')}
          row={(campaign) => (
            <tr key={campaign.id}>
              <td>
                <a href={`/console/campaigns/${campaign.id}`}>{campaign.name}</a>
              </td>
              <td>
                {campaign.template.name} <span class="muted">{campaign.template.language}</span>
              </td>
              <td>
                <StateBadge state={campaign.state} />
              </td>
              <td>
                <ProgressBar campaign={campaign} id={`progress-${campaign.id}`} />
              </td>
              <td>
                <At iso={campaign.created_at} />
              </td>
            </tr>
          )}
        />
      )}
      {pager(data?.next_cursor)}
    </Page>
  );
}
