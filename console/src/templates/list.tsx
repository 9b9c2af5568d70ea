import { useState } from 'preact/hooks';
import { api, must } from '../api/client';
import { At, Failure, Page, Table, useAction, useLoad, usePages } from '../admin/ui';
import { t } from '../i18n';
import { InstancePicker, shownInstance } from '../instance';
import { session } from '../session';
import { CATEGORIES, labelOf, STATUSES } from './catalogue';
import { QualityBadge, StatusBadge } from './view';

/** The catalogue of the chosen instance's business account: filters, pages, sync. */
export function Templates() {
  const instance = shownInstance(session.value!);
  const [name, setName] = useState('');
  const [status, setStatus] = useState<'' | (typeof STATUSES)[number]>('');
  const [category, setCategory] = useState<'' | (typeof CATEGORIES)[number]>('');
  const { cursor, restart, pager } = usePages();
  const { data, error, reload } = useLoad(async () => {
    if (!instance) return undefined;
    return must(
      await api.GET('/templates', {
        params: {
          query: {
            instance_id: instance,
            limit: 25,
            ...(name ? { name } : {}),
            ...(status ? { status } : {}),
            ...(category ? { category } : {}),
            ...(cursor ? { cursor } : {}),
          },
        },
      }),
    );
  }, [instance, name, status, category, cursor]);
  const sync = useAction();
  const [synced, setSynced] = useState<string | null>(null);
  const syncNow = () =>
    void sync.run(async () => {
      setSynced(null);
      const counts = must(await api.POST('/templates/sync', { body: { instance_id: instance! } }));
      setSynced(t('templates.synced', { count: counts.templates, removed: counts.removed }));
      restart();
      reload();
    });
  // A filter changed: its first page.
  const filter =
    <T extends string>(set: (value: T) => void) =>
    (e: Event) => {
      set((e.currentTarget as HTMLInputElement | HTMLSelectElement).value.trim() as T);
      restart();
    };

  return (
    <Page
      title={t('nav.templates')}
      actions={
        <div class="row">
          <InstancePicker session={session.value!} />
          <button type="button" class="secondary" disabled={sync.busy} onClick={syncNow}>
            {t('templates.sync')}
          </button>
          <a class="button" href="/console/templates/new">
            {t('templates.new')}
          </a>
        </div>
      }
    >
      {synced && <p role="status">{synced}</p>}
      <Failure error={sync.error} />
      <div class="filters" role="search" aria-label={t('templates.filters')}>
        <label>
          {t('templates.namePrefix')}
          <input type="search" value={name} onInput={filter<string>(setName)} autocomplete="off" />
        </label>
        <label>
          {t('templates.status')}
          <select value={status} onChange={filter<typeof status>(setStatus)}>
            <option value="">{t('templates.any')}</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {labelOf('statuses', s)}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('templates.category')}
          <select value={category} onChange={filter<typeof category>(setCategory)}>
            <option value="">{t('templates.any')}</option>
            {CATEGORIES.map((c) => (
              <option key={c} value={c}>
                {labelOf('categories', c)}
              </option>
            ))}
          </select>
        </label>
      </div>
      <Failure error={error} />
      {data && (
        <Table
          columns={[
            t('templates.name'),
            t('templates.language'),
            t('templates.category'),
            t('templates.status'),
            t('templates.quality'),
            t('admin.updated'),
          ]}
          items={data.data}
          empty={t('templates.none')}
          row={(template) => (
            <tr key={template.id}>
              <td>
                <a href={`/console/templates/${template.id}`}>{template.name ?? template.id}</a>
              </td>
              <td>{template.language ?? '—'}</td>
              <td>{labelOf('categories', template.category)}</td>
              <td>
                <StatusBadge status={template.status} />
              </td>
              <td>
                <QualityBadge quality={template.quality} />
              </td>
              <td>
                <At iso={template.status_at} />
              </td>
            </tr>
          )}
        />
      )}
      {pager(data?.next_cursor)}
    </Page>
  );
}
