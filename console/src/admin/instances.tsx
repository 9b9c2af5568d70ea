import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, must, type Schemas } from '../api/client';
import { t } from '../i18n';
import { loadSession } from '../session';
import { At, CopyField, Failure, field, Page, useAction, useLoad, Table } from './ui';

type Instance = Schemas['InstanceListItemDto'];
type Detail = Schemas['InstanceDetailDto'];

/** The rejected-token warning: the number neither sends nor receives until a new token is set. */
function TokenWarning({ instance }: { instance: Pick<Instance, 'token_rejected_at'> }) {
  if (!instance.token_rejected_at) return null;
  return (
    <p class="warning" role="alert">
      {t('instances.tokenRejected')} <At iso={instance.token_rejected_at} />
    </p>
  );
}

function CreateInstance({ onCreated }: { onCreated: (id: string) => void }) {
  const { busy, error, run } = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => field(form, name);
    const optional = (name: string) => text(name) || undefined;
    void run(async () => {
      const created = must(
        await api.POST('/admin/instances', {
          body: {
            name: text('name'),
            phone_number_id: text('phone_number_id'),
            channel_account_id: text('channel_account_id'),
            access_token: text('access_token'),
            token_type: text('token_type') as Detail['token_type'],
            business_id: optional('business_id'),
            platform_app_id: optional('platform_app_id'),
          },
        }),
      );
      await loadSession();
      onCreated(created.id);
    });
  };
  return (
    <form class="panel form" onSubmit={submit} aria-labelledby="new-instance">
      <h2 id="new-instance">{t('instances.new')}</h2>
      <label>
        {t('instances.name')}
        <input name="name" required />
      </label>
      <label>
        {t('instances.phoneNumberId')}
        <input name="phone_number_id" required inputMode="numeric" />
      </label>
      <label>
        {t('instances.accountId')}
        <input name="channel_account_id" required inputMode="numeric" />
      </label>
      <label>
        {t('instances.accessToken')}
        <input name="access_token" type="password" required autocomplete="off" />
      </label>
      <label>
        {t('instances.tokenType')}
        <select name="token_type">
          <option value="system_user">{t('instances.systemUser')}</option>
          <option value="oauth">OAuth</option>
        </select>
      </label>
      <label>
        {t('instances.businessId')}
        <input name="business_id" inputMode="numeric" />
      </label>
      <label>
        {t('instances.appId')}
        <input name="platform_app_id" inputMode="numeric" />
      </label>
      <p class="muted">{t('instances.tokenChecked')}</p>
      <Failure error={error} />
      <button type="submit" disabled={busy}>
        {t('instances.create')}
      </button>
    </form>
  );
}

export function Instances() {
  const { route } = useLocation();
  const [creating, setCreating] = useState(false);
  const { data, error } = useLoad(async () => must(await api.GET('/admin/instances')));
  return (
    <Page
      title={t('nav.instances')}
      actions={
        <button type="button" onClick={() => setCreating(!creating)} aria-expanded={creating}>
          {t('instances.new')}
        </button>
      }
    >
      {creating && <CreateInstance onCreated={(id) => route(`/console/instances/${id}`)} />}
      <Failure error={error} />
      {data && (
        <Table
          columns={[
            t('instances.name'),
            t('instances.number'),
            t('instances.state'),
            t('instances.quality'),
          ]}
          items={data}
          empty={t('instances.none')}
          row={(instance) => (
            <tr key={instance.id}>
              <td>
                <a href={`/console/instances/${instance.id}`}>{instance.name}</a>
                <TokenWarning instance={instance} />
              </td>
              <td>{instance.display_phone_number ?? instance.phone_number_id}</td>
              <td>
                <span class={`badge ${instance.is_active ? 'open' : 'closed'}`}>
                  {instance.is_active ? t('instances.active') : t('instances.inactive')}
                </span>
              </td>
              <td>{instance.quality_rating ?? '—'}</td>
            </tr>
          )}
        />
      )}
    </Page>
  );
}

/** Blank: leave it as it is; a number; or null (the global default). */
function numberOrNull(value: string): number | null {
  return value.trim() === '' ? null : Number(value);
}

/** A number of seconds an instance may set; blank: the global default. */
function Seconds({ name, label, value }: { name: string; label: string; value: number | null }) {
  return (
    <label>
      {label}
      <input
        name={name}
        type="number"
        min="0"
        step="0.1"
        defaultValue={value === null ? '' : String(value)}
        placeholder={t('admin.default')}
      />
    </label>
  );
}

function EditInstance({ instance, onSaved }: { instance: Detail; onSaved: () => void }) {
  const { busy, error, run } = useAction();
  const [saved, setSaved] = useState(false);
  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => field(form, name);
    const typing = text('typing_indicator');
    const body: Schemas['UpdateInstanceDto'] = {
      name: text('name'),
      token_type: text('token_type') as Detail['token_type'],
      agent: {
        enabled: form.get('agent_enabled') === 'on',
        url: text('agent_url') || null,
        buffer_delay_s: numberOrNull(text('buffer_delay_s')),
        buffer_max_wait_s: numberOrNull(text('buffer_max_wait_s')),
        typing_indicator: typing === '' ? null : typing === 'on',
        ...(text('agent_token') ? { token: text('agent_token') } : {}),
      },
      ...(text('access_token') ? { access_token: text('access_token') } : {}),
    };
    setSaved(false);
    void run(async () => {
      must(
        await api.PATCH('/admin/instances/{id}', { params: { path: { id: instance.id } }, body }),
      );
      setSaved(true);
      await loadSession();
      onSaved();
    });
  };
  const agent = instance.agent;
  return (
    <form class="panel form" onSubmit={submit} aria-labelledby="edit-instance">
      <h2 id="edit-instance">{t('instances.edit')}</h2>
      <label>
        {t('instances.name')}
        <input name="name" required defaultValue={instance.name} />
      </label>
      <label>
        {t('instances.newAccessToken')}
        <input name="access_token" type="password" autocomplete="off" />
      </label>
      <label>
        {t('instances.tokenType')}
        <select name="token_type">
          <option value="system_user" selected={instance.token_type === 'system_user'}>
            {t('instances.systemUser')}
          </option>
          <option value="oauth" selected={instance.token_type === 'oauth'}>
            OAuth
          </option>
        </select>
      </label>
      <fieldset>
        <legend>{t('instances.agent')}</legend>
        <label class="check">
          <input name="agent_enabled" type="checkbox" defaultChecked={agent.enabled} />
          {t('instances.agentEnabled')}
        </label>
        <label>
          {t('instances.agentUrl')}
          <input
            name="agent_url"
            type="url"
            defaultValue={agent.url ?? ''}
            placeholder={t('admin.default')}
          />
        </label>
        <label>
          {t('instances.agentToken')}
          <input
            name="agent_token"
            type="password"
            autocomplete="off"
            placeholder={agent.token_set ? t('instances.tokenSet') : t('admin.default')}
          />
        </label>
        <Seconds
          name="buffer_delay_s"
          label={t('instances.bufferDelay')}
          value={agent.buffer_delay_s}
        />
        <Seconds
          name="buffer_max_wait_s"
          label={t('instances.bufferMaxWait')}
          value={agent.buffer_max_wait_s}
        />
        <label>
          {t('instances.typing')}
          <select name="typing_indicator">
            <option value="" selected={agent.typing_indicator === null}>
              {t('admin.default')}
            </option>
            <option value="on" selected={agent.typing_indicator === true}>
              {t('admin.on')}
            </option>
            <option value="off" selected={agent.typing_indicator === false}>
              {t('admin.off')}
            </option>
          </select>
        </label>
      </fieldset>
      <Failure error={error} />
      {saved && <p role="status">{t('admin.saved')}</p>}
      <button type="submit" disabled={busy}>
        {t('admin.save')}
      </button>
    </form>
  );
}

export function InstanceDetail({ id }: { id: string }) {
  const { route } = useLocation();
  const { data, error, reload } = useLoad(
    async () => must(await api.GET('/admin/instances/{id}', { params: { path: { id } } })),
    [id],
  );
  const action = useAction();
  const path = { params: { path: { id } } };
  const toggle = () =>
    void action.run(async () => {
      must(
        data?.is_active
          ? await api.POST('/admin/instances/{id}/deactivate', path)
          : await api.POST('/admin/instances/{id}/activate', path),
      );
      await loadSession();
      reload();
    });
  const remove = () => {
    if (!data || !window.confirm(t('instances.confirmDelete', { name: data.name }))) return;
    void action.run(async () => {
      must(await api.DELETE('/admin/instances/{id}', path));
      await loadSession();
      route('/console/instances');
    });
  };
  return (
    <Page title={data?.name ?? t('nav.instances')}>
      <p>
        <a href="/console/instances">← {t('nav.instances')}</a>
      </p>
      <Failure error={error} />
      {data && (
        <>
          <TokenWarning instance={data} />
          <section class="panel" aria-labelledby="webhook-title">
            <h2 id="webhook-title">{t('instances.webhook')}</h2>
            <p class="muted">{t('instances.webhookHelp')}</p>
            <CopyField
              label={t('instances.callbackUrl')}
              value={`${location.origin}/webhooks/messenger`}
            />
            <CopyField label={t('instances.verifyToken')} value={data.webhook_verify_token} />
          </section>
          <section class="panel" aria-labelledby="state-title">
            <h2 id="state-title">{t('instances.state')}</h2>
            <dl>
              <dt>{t('instances.number')}</dt>
              <dd>{data.display_phone_number ?? data.phone_number_id}</dd>
              <dt>{t('instances.verifiedName')}</dt>
              <dd>{data.verified_name ?? '—'}</dd>
              <dt>{t('instances.quality')}</dt>
              <dd>{data.quality_rating ?? '—'}</dd>
              <dt>{t('instances.state')}</dt>
              <dd>{data.is_active ? t('instances.active') : t('instances.inactive')}</dd>
            </dl>
            <div class="row">
              <button type="button" class="secondary" disabled={action.busy} onClick={toggle}>
                {data.is_active ? t('instances.deactivate') : t('instances.activate')}
              </button>
              <button type="button" class="danger" disabled={action.busy} onClick={remove}>
                {t('admin.delete')}
              </button>
            </div>
            <Failure error={action.error} />
          </section>
          <EditInstance key={data.updated_at} instance={data} onSaved={reload} />
        </>
      )}
    </Page>
  );
}
