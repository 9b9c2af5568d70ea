import { useState } from 'preact/hooks';
import { api, must, type Schemas } from '../api/client';
import { At, Failure, Table, useLoad, usePages } from '../admin/ui';
import { t } from '../i18n';

type Recipient = Schemas['RecipientDto'];
const STATES: Array<Recipient['state']> = ['queued', 'sending', 'sent', 'failed', 'skipped'];

/** Why a recipient failed or was skipped: the reason, the platform's code and message. */
function Outcome({ recipient }: { recipient: Recipient }) {
  const parts = [
    recipient.reason
      ? t(`campaigns.reasons.${recipient.reason}`, { defaultValue: recipient.reason })
      : '',
    recipient.error_code !== null ? String(recipient.error_code) : '',
    recipient.error_message ?? '',
  ].filter(Boolean);
  return parts.length > 0 ? <span class="error-text">{parts.join(' · ')}</span> : null;
}

/**
 * A campaign's recipients in list order, by state, page by page; read again
 * when `round` changes (the campaign's progress moved).
 */
export function Recipients({
  id,
  instance,
  round,
}: {
  id: string;
  instance: string;
  round: string;
}) {
  const [state, setState] = useState<'' | Recipient['state']>('');
  const { cursor, restart, pager } = usePages();
  const { data, error } = useLoad(
    async () =>
      must(
        await api.GET('/campaigns/{id}/recipients', {
          params: {
            path: { id },
            query: {
              instance_id: instance,
              limit: 50,
              ...(state ? { state } : {}),
              ...(cursor ? { cursor } : {}),
            },
          },
        }),
      ),
    [id, instance, state, cursor, round],
  );
  return (
    <section class="panel" aria-labelledby="recipients-title">
      <div class="page-head">
        <h2 id="recipients-title">{t('campaigns.recipients')}</h2>
        <label>
          {t('campaigns.state')}{' '}
          <select
            value={state}
            onChange={(e) => {
              setState(e.currentTarget.value as typeof state);
              restart();
            }}
          >
            <option value="">{t('templates.any')}</option>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {t(`campaigns.recipientStates.${s}`)}
              </option>
            ))}
          </select>
        </label>
      </div>
      <Failure error={error} />
      {data && (
        <Table
          columns={[
            '#',
            t('campaigns.to'),
            t('campaigns.state'),
            t('campaigns.delivery'),
            t('campaigns.outcome'),
            t('campaigns.sentAt'),
          ]}
          items={data.data}
          empty={t('campaigns.noRecipients')}
          label={t('campaigns.recipientList')}
          row={(recipient) => (
            <tr key={recipient.seq} data-state={recipient.state}>
              <td>{recipient.seq}</td>
              <td>{recipient.to ?? recipient.recipient ?? '—'}</td>
              <td>{t(`campaigns.recipientStates.${recipient.state}`)}</td>
              <td>
                {recipient.delivery
                  ? t(`conversation.status.${recipient.delivery}`, {
                      defaultValue: recipient.delivery,
                    })
                  : '—'}
              </td>
              <td>
                <Outcome recipient={recipient} />
              </td>
              <td>
                <At iso={recipient.sent_at} />
              </td>
            </tr>
          )}
        />
      )}
      {pager(data?.next_cursor)}
    </section>
  );
}
