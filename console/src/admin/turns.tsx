import { useState } from 'preact/hooks';
import { api, must, type Schemas } from '../api/client';
import { t } from '../i18n';
import { InstanceOptions, instanceName } from './api-keys';
import { At, Failure, Page, useAction, useLoad, usePages, Table } from './ui';

type Turn = Schemas['TurnDto'];
type Status = Turn['status'];
const STATUSES: Status[] = [
  'failed',
  'claimed',
  'calling',
  'answered',
  'sending',
  'done',
  'skipped',
];

const contactOf = (turn: Turn): string =>
  turn.contact.name ?? turn.contact.wa_id ?? turn.contact.user_id ?? turn.contact.id;

export function Turns() {
  const [status, setStatus] = useState<Status>('failed');
  const [instance, setInstance] = useState('');
  const { cursor, restart, pager } = usePages();
  const { data, error } = useLoad(
    async () =>
      must(
        await api.GET('/admin/turns', {
          params: {
            query: {
              status,
              limit: 25,
              ...(instance ? { instance_id: instance } : {}),
              ...(cursor ? { cursor } : {}),
            },
          },
        }),
      ),
    [status, instance, cursor],
  );
  return (
    <Page title={t('nav.turns')}>
      <div class="filters">
        <label>
          {t('turns.status')}{' '}
          <select
            onChange={(e) => {
              setStatus(e.currentTarget.value as Status);
              restart();
            }}
          >
            {STATUSES.map((s) => (
              <option key={s} value={s} selected={s === status}>
                {t(`turns.statuses.${s}`)}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('events.instance')}{' '}
          <select
            onChange={(e) => {
              setInstance(e.currentTarget.value);
              restart();
            }}
          >
            <InstanceOptions any={t('admin.allInstances')} />
          </select>
        </label>
      </div>
      <Failure error={error} />
      {data && (
        <Table
          columns={[
            t('turns.contact'),
            t('events.instance'),
            t('turns.status'),
            t('turns.error'),
            t('admin.updated'),
          ]}
          items={data.data}
          empty={t('turns.none')}
          row={(turn) => (
            <tr key={turn.id}>
              <td>
                <a href={`/console/turns/${turn.id}`}>{contactOf(turn)}</a>
              </td>
              <td>{instanceName(turn.instance_id)}</td>
              <td>{t(`turns.statuses.${turn.status}`)}</td>
              <td class="error-text">{turn.last_error ?? ''}</td>
              <td>
                <At iso={turn.updated_at} />
              </td>
            </tr>
          )}
        />
      )}
      {pager(data?.next_cursor)}
    </Page>
  );
}

export function TurnDetail({ id }: { id: string }) {
  const { data, error, reload } = useLoad(
    async () => must(await api.GET('/admin/turns/{id}', { params: { path: { id } } })),
    [id],
  );
  const retry = useAction();
  const [retried, setRetried] = useState(false);
  const again = () =>
    void retry.run(async () => {
      must(await api.POST('/admin/turns/{id}/retry', { params: { path: { id } } }));
      setRetried(true);
      reload();
    });
  return (
    <Page title={t('turns.turn')}>
      <p>
        <a href="/console/turns">← {t('nav.turns')}</a>
      </p>
      <Failure error={error} />
      {data && (
        <>
          <section class="panel" aria-labelledby="turn-state">
            <h2 id="turn-state">
              {contactOf(data)} · {t(`turns.statuses.${data.status}`)}
            </h2>
            <dl>
              <dt>{t('events.instance')}</dt>
              <dd>{instanceName(data.instance_id)}</dd>
              <dt>{t('turns.attempts')}</dt>
              <dd>{data.attempts}</dd>
              <dt>{t('turns.error')}</dt>
              <dd class="error-text">{data.last_error ?? '—'}</dd>
              <dt>{t('admin.created')}</dt>
              <dd>
                <At iso={data.created_at} />
              </dd>
              <dt>{t('turns.messages')}</dt>
              <dd>
                {data.message_ids.map((wamid) => (
                  <code key={wamid} class="block">
                    {wamid}
                  </code>
                ))}
              </dd>
            </dl>
            {data.status === 'failed' && (
              <button type="button" disabled={retry.busy} onClick={again}>
                {t('turns.retry')}
              </button>
            )}
            {retried && <p role="status">{t('turns.retried')}</p>}
            <Failure error={retry.error} />
          </section>
          <section class="panel" aria-labelledby="turn-parts">
            <h2 id="turn-parts">{t('turns.parts')}</h2>
            {data.parts.length === 0 && <p class="muted">{t('turns.noParts')}</p>}
            <ol class="parts">
              {data.parts.map((part) => (
                <li key={part.position}>
                  <code>{part.kind}</code> · {t(`turns.partStatuses.${part.status}`)}
                  {part.error && <span class="error-text"> · {part.error}</span>}
                  <pre>{JSON.stringify(part.body, null, 2)}</pre>
                </li>
              ))}
            </ol>
          </section>
        </>
      )}
    </Page>
  );
}
