import { useState } from 'preact/hooks';
import { api, must, type Schemas } from '../api/client';
import { t } from '../i18n';
import { session } from '../session';
import { At, Failure, field, OnceSecret, Page, useAction, useLoad, Table } from './ui';

/** An instance's name, from the session's list (which an admin's holds in full). */
export function instanceName(id: string | null): string {
  if (!id) return t('admin.allInstances');
  return session.value?.instances.find((i) => i.id === id)?.name ?? id;
}

/** Options for an instance select; `any`: also "every instance" (the empty value). */
export function InstanceOptions({ any }: { any?: string }) {
  return (
    <>
      {any !== undefined && <option value="">{any}</option>}
      {session.value?.instances.map((instance) => (
        <option key={instance.id} value={instance.id}>
          {instance.name}
        </option>
      ))}
    </>
  );
}

export default function ApiKeys() {
  const { data, error, reload } = useLoad(async () => must(await api.GET('/admin/api-keys')));
  const [created, setCreated] = useState<Schemas['CreatedApiKeyDto'] | null>(null);
  const create = useAction();
  const revoke = useAction();

  const submit = (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const instance = field(form, 'instance_id');
    void create.run(async () => {
      const key = must(
        await api.POST('/admin/api-keys', {
          body: {
            name: field(form, 'name'),
            ...(instance ? { instance_id: instance } : {}),
          },
        }),
      );
      setCreated(key);
      formElement.reset();
      reload();
    });
  };
  const remove = (key: Schemas['ApiKeyDto']) => {
    if (!window.confirm(t('keys.confirmRevoke', { name: key.name }))) return;
    void revoke.run(async () => {
      must(await api.DELETE('/admin/api-keys/{id}', { params: { path: { id: key.id } } }));
      reload();
    });
  };

  return (
    <Page title={t('nav.keys')}>
      {created && (
        <OnceSecret
          label={t('keys.created', { name: created.name })}
          value={created.key}
          onDone={() => setCreated(null)}
        />
      )}
      <form class="panel form inline" onSubmit={submit} aria-labelledby="new-key">
        <h2 id="new-key">{t('keys.new')}</h2>
        <label>
          {t('keys.name')}
          <input name="name" required />
        </label>
        <label>
          {t('keys.instance')}
          <select name="instance_id">
            <InstanceOptions any={t('admin.allInstances')} />
          </select>
        </label>
        <button type="submit" disabled={create.busy}>
          {t('keys.create')}
        </button>
        <Failure error={create.error} />
      </form>
      <Failure error={error ?? revoke.error} />
      {data && (
        <Table
          columns={[
            t('keys.name'),
            t('keys.prefix'),
            t('keys.instance'),
            t('admin.created'),
            t('keys.lastUsed'),
          ]}
          items={data}
          empty={t('keys.none')}
          actions
          row={(key) => (
            <tr key={key.id}>
              <td>{key.name}</td>
              <td>
                <code>{key.prefix}…</code>
              </td>
              <td>{instanceName(key.instance_id)}</td>
              <td>
                <At iso={key.created_at} />
              </td>
              <td>
                <At iso={key.last_used_at} />
              </td>
              <td>
                <button
                  type="button"
                  class="danger"
                  disabled={revoke.busy}
                  aria-label={t('keys.revokeNamed', { name: key.name })}
                  onClick={() => remove(key)}
                >
                  {t('keys.revoke')}
                </button>
              </td>
            </tr>
          )}
        />
      )}
    </Page>
  );
}
