import { api, must, type Schemas } from '../api/client';
import { t } from '../i18n';
import { session } from '../session';
import { instanceName } from './api-keys';
import { Failure, field, fields, Page, useAction, useLoad } from './ui';

type Account = Schemas['AccountDto'];

/** Checkboxes of the instances an operator answers for. */
function InstanceChoice({ chosen }: { chosen: string[] }) {
  return (
    <fieldset>
      <legend>{t('accounts.instances')}</legend>
      {session.value?.instances.map((instance) => (
        <label key={instance.id} class="check">
          <input
            type="checkbox"
            name="instance_ids"
            value={instance.id}
            defaultChecked={chosen.includes(instance.id)}
          />
          {instance.name}
        </label>
      ))}
    </fieldset>
  );
}

function RoleSelect({ role }: { role: Account['role'] }) {
  return (
    <label>
      {t('accounts.role')}
      <select name="role">
        <option value="operator" selected={role === 'operator'}>
          {t('accounts.operator')}
        </option>
        <option value="admin" selected={role === 'admin'}>
          {t('accounts.admin')}
        </option>
      </select>
    </label>
  );
}

const chosenInstances = (form: FormData): string[] => fields(form, 'instance_ids');

function CreateAccount({ onCreated }: { onCreated: () => void }) {
  const { busy, error, run } = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    const element = event.currentTarget as HTMLFormElement;
    const form = new FormData(element);
    const text = (name: string) => field(form, name);
    void run(async () => {
      must(
        await api.POST('/admin/accounts', {
          body: {
            username: text('username'),
            display_name: text('display_name'),
            role: text('role') as Account['role'],
            password: field(form, 'password'),
            instance_ids: chosenInstances(form),
          },
        }),
      );
      element.reset();
      onCreated();
    });
  };
  return (
    <form class="panel form" onSubmit={submit} aria-labelledby="new-account">
      <h2 id="new-account">{t('accounts.new')}</h2>
      <label>
        {t('accounts.username')}
        <input name="username" required autocomplete="off" pattern="[A-Za-z0-9._\-]+" />
      </label>
      <label>
        {t('accounts.displayName')}
        <input name="display_name" required />
      </label>
      <RoleSelect role="operator" />
      <label>
        {t('accounts.password')}
        <input
          name="password"
          type="password"
          required
          minLength={12}
          autocomplete="new-password"
        />
      </label>
      <InstanceChoice chosen={[]} />
      <Failure error={error} />
      <button type="submit" disabled={busy}>
        {t('accounts.create')}
      </button>
    </form>
  );
}

function EditAccount({ account, onSaved }: { account: Account; onSaved: () => void }) {
  const save = useAction();
  const password = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    void save.run(async () => {
      must(
        await api.PATCH('/admin/accounts/{id}', {
          params: { path: { id: account.id } },
          body: {
            display_name: field(form, 'display_name'),
            role: field(form, 'role') as Account['role'],
            instance_ids: chosenInstances(form),
            disabled: form.get('disabled') === 'on',
          },
        }),
      );
      onSaved();
    });
  };
  const setPassword = (event: Event) => {
    event.preventDefault();
    const element = event.currentTarget as HTMLFormElement;
    const value = field(new FormData(element), 'password');
    void password.run(async () => {
      must(
        await api.POST('/admin/accounts/{id}/password', {
          params: { path: { id: account.id } },
          body: { password: value },
        }),
      );
      element.reset();
      onSaved();
    });
  };
  return (
    <div class="edit">
      <form
        class="form"
        onSubmit={submit}
        aria-label={t('accounts.editNamed', { name: account.username })}
      >
        <label>
          {t('accounts.displayName')}
          <input name="display_name" required defaultValue={account.display_name} />
        </label>
        <RoleSelect role={account.role} />
        <InstanceChoice chosen={account.instance_ids} />
        <label class="check">
          <input name="disabled" type="checkbox" defaultChecked={account.disabled} />
          {t('accounts.disabled')}
        </label>
        <Failure error={save.error} />
        <button type="submit" disabled={save.busy}>
          {t('admin.save')}
        </button>
      </form>
      <form
        class="form"
        onSubmit={setPassword}
        aria-label={t('accounts.passwordNamed', { name: account.username })}
      >
        <label>
          {t('accounts.newPassword')}
          <input
            name="password"
            type="password"
            required
            minLength={12}
            autocomplete="new-password"
          />
        </label>
        <p class="muted">{t('accounts.passwordEnds')}</p>
        <Failure error={password.error} />
        <button type="submit" class="secondary" disabled={password.busy}>
          {t('accounts.setPassword')}
        </button>
      </form>
    </div>
  );
}

export default function Accounts() {
  const { data, error, reload } = useLoad(async () => must(await api.GET('/admin/accounts')));
  return (
    <Page title={t('nav.accounts')}>
      <CreateAccount onCreated={reload} />
      <Failure error={error} />
      {data && data.length === 0 && <p class="muted">{t('accounts.none')}</p>}
      <ul class="records">
        {data?.map((account) => (
          <li key={`${account.id}:${account.updated_at}`}>
            <details>
              <summary>
                <strong>{account.display_name}</strong>{' '}
                <span class="muted">@{account.username}</span>{' '}
                <span class="badge">{t(`accounts.${account.role}`)}</span>
                {account.disabled && <span class="badge closed">{t('accounts.disabled')}</span>}
                {account.role === 'operator' && (
                  <span class="muted">
                    {' '}
                    · {account.instance_ids.map(instanceName).join(', ') || '—'}
                  </span>
                )}
              </summary>
              <EditAccount account={account} onSaved={reload} />
            </details>
          </li>
        ))}
      </ul>
    </Page>
  );
}
