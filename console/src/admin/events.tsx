import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, must, type Schemas } from '../api/client';
import { t } from '../i18n';
import { InstanceOptions, instanceName } from './api-keys';
import {
  At,
  Failure,
  field,
  fields,
  OnceSecret,
  Page,
  useAction,
  useLoad,
  usePages,
  Table,
} from './ui';

type Subscription = Schemas['EventSubscriptionDto'];
type EventType = Subscription['event_types'][number];
type Delivery = Schemas['EventDeliveryDto'];

const EVENT_TYPES: EventType[] = [
  'message.received',
  'message.status',
  'message.sent',
  'template.status',
  'turn.failed',
  'instance.status',
  'contact.handoff',
];
const STATES = ['pending', 'delivered', 'failed'] as const;

function TypeChoice({ chosen }: { chosen: EventType[] }) {
  return (
    <fieldset>
      <legend>{t('events.types')}</legend>
      {EVENT_TYPES.map((type) => (
        <label key={type} class="check">
          <input
            type="checkbox"
            name="event_types"
            value={type}
            defaultChecked={chosen.includes(type)}
          />
          <code>{type}</code>
        </label>
      ))}
    </fieldset>
  );
}

const chosenTypes = (form: FormData) => fields(form, 'event_types') as EventType[];

function SubscriptionState({ subscription }: { subscription: Subscription }) {
  if (!subscription.enabled)
    return (
      <span class="badge closed">
        {t('events.disabled')}
        {subscription.disabled_reason ? `: ${subscription.disabled_reason}` : ''}
      </span>
    );
  if (subscription.failing_since)
    return (
      <span class="badge opted-out">
        {t('events.failingSince')} <At iso={subscription.failing_since} />
      </span>
    );
  return <span class="badge open">{t('events.delivering')}</span>;
}

export function EventSubscriptions() {
  const { route } = useLocation();
  const { data, error } = useLoad(async () => must(await api.GET('/admin/event-subscriptions')));
  const [created, setCreated] = useState<Schemas['CreatedEventSubscriptionDto'] | null>(null);
  const create = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const instance = field(form, 'instance_id');
    const description = field(form, 'description');
    void create.run(async () => {
      setCreated(
        must(
          await api.POST('/admin/event-subscriptions', {
            body: {
              url: field(form, 'url'),
              event_types: chosenTypes(form),
              enabled: true,
              ...(instance ? { instance_id: instance } : {}),
              ...(description ? { description } : {}),
            },
          }),
        ),
      );
    });
  };
  return (
    <Page title={t('nav.events')}>
      {created ? (
        <OnceSecret
          label={t('events.secretOf', { url: created.url })}
          value={created.secret}
          onDone={() => route(`/console/events/${created.id}`)}
        />
      ) : (
        <form class="panel form" onSubmit={submit} aria-labelledby="new-subscription">
          <h2 id="new-subscription">{t('events.new')}</h2>
          <label>
            {t('events.url')}
            <input name="url" type="url" required placeholder="https://" />
          </label>
          <TypeChoice chosen={['message.received', 'message.status']} />
          <label>
            {t('events.instance')}
            <select name="instance_id">
              <InstanceOptions any={t('admin.allInstances')} />
            </select>
          </label>
          <label>
            {t('events.description')}
            <input name="description" />
          </label>
          <Failure error={create.error} />
          <button type="submit" disabled={create.busy}>
            {t('events.create')}
          </button>
        </form>
      )}
      <Failure error={error} />
      {data && (
        <Table
          columns={[t('events.url'), t('events.types'), t('events.instance'), t('events.state')]}
          items={data}
          empty={t('events.none')}
          row={(subscription) => (
            <tr key={subscription.id}>
              <td>
                <a href={`/console/events/${subscription.id}`}>{subscription.url}</a>
                {subscription.description && <p class="muted">{subscription.description}</p>}
              </td>
              <td>{subscription.event_types.join(', ')}</td>
              <td>{instanceName(subscription.instance_id)}</td>
              <td>
                <SubscriptionState subscription={subscription} />
              </td>
            </tr>
          )}
        />
      )}
    </Page>
  );
}

function Deliveries({ id, round }: { id: string; round: number }) {
  const [state, setState] = useState<'' | (typeof STATES)[number]>('');
  const { cursor, restart, pager } = usePages();
  const retry = useAction();
  const { data, error, reload } = useLoad(
    async () =>
      must(
        await api.GET('/admin/event-subscriptions/{id}/deliveries', {
          params: {
            path: { id },
            query: { ...(state ? { state } : {}), ...(cursor ? { cursor } : {}), limit: 25 },
          },
        }),
      ),
    [id, state, cursor, round],
  );
  const again = (delivery: Delivery) =>
    void retry.run(async () => {
      must(
        await api.POST('/admin/event-deliveries/{id}/retry', {
          params: { path: { id: delivery.id } },
        }),
      );
      reload();
    });
  return (
    <section class="panel" aria-labelledby="deliveries-title">
      <div class="page-head">
        <h2 id="deliveries-title">{t('events.deliveries')}</h2>
        <label>
          {t('events.state')}{' '}
          <select
            onChange={(e) => {
              setState(e.currentTarget.value as typeof state);
              restart();
            }}
          >
            <option value="">{t('contacts.filters.all')}</option>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {t(`events.states.${s}`)}
              </option>
            ))}
          </select>
        </label>
        <button type="button" class="secondary" onClick={reload}>
          {t('admin.refresh')}
        </button>
      </div>
      <Failure error={error ?? retry.error} />
      {data && (
        <Table
          columns={[
            t('events.event'),
            t('events.state'),
            t('events.attempts'),
            t('events.answer'),
            t('events.next'),
          ]}
          items={data.data}
          empty={t('events.noDeliveries')}
          actions
          row={(delivery) => (
            <tr key={delivery.id} data-state={delivery.state}>
              <td>
                <code>{delivery.event_type}</code>
                <br />
                <At iso={delivery.event_created_at} />
              </td>
              <td>{t(`events.states.${delivery.state}`)}</td>
              <td>{delivery.attempts}</td>
              <td>
                {delivery.last_status ?? ''} {delivery.last_error ?? ''}
                {delivery.last_response && <pre>{delivery.last_response}</pre>}
              </td>
              <td>
                <At iso={delivery.next_attempt_at} />
              </td>
              <td>
                {delivery.state !== 'delivered' && (
                  <button
                    type="button"
                    class="secondary"
                    disabled={retry.busy}
                    onClick={() => again(delivery)}
                  >
                    {t('events.retry')}
                  </button>
                )}
              </td>
            </tr>
          )}
        />
      )}
      {pager(data?.next_cursor)}
    </section>
  );
}

/** A datetime-local value as an ISO instant (the browser's zone). */
const instant = (local: string): string => new Date(local).toISOString();

export function EventSubscriptionDetail({ id }: { id: string }) {
  const { route } = useLocation();
  const path = { params: { path: { id } } };
  const { data, error, reload } = useLoad(
    async () => must(await api.GET('/admin/event-subscriptions/{id}', path)),
    [id],
  );
  const [secret, setSecret] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [round, setRound] = useState(0);
  const action = useAction();
  const done = (message: string) => {
    setNotice(message);
    reload();
    setRound((r) => r + 1);
  };

  const save = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    void action.run(async () => {
      must(
        await api.PATCH('/admin/event-subscriptions/{id}', {
          ...path,
          body: {
            url: field(form, 'url'),
            description: field(form, 'description'),
            event_types: chosenTypes(form),
          },
        }),
      );
      done(t('admin.saved'));
    });
  };
  const toggle = () =>
    void action.run(async () => {
      must(
        await api.PATCH('/admin/event-subscriptions/{id}', {
          ...path,
          body: { enabled: !data?.enabled },
        }),
      );
      done(data?.enabled ? t('events.nowDisabled') : t('events.nowEnabled'));
    });
  const rotate = () => {
    if (!window.confirm(t('events.confirmRotate'))) return;
    void action.run(async () => {
      setSecret(must(await api.POST('/admin/event-subscriptions/{id}/rotate-secret', path)).secret);
      reload();
    });
  };
  const ping = () =>
    void action.run(async () => {
      must(await api.POST('/admin/event-subscriptions/{id}/test', path));
      done(t('events.pingSent'));
    });
  const replay = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const until = field(form, 'until');
    void action.run(async () => {
      const { queued } = must(
        await api.POST('/admin/event-subscriptions/{id}/replay', {
          ...path,
          body: {
            since: instant(field(form, 'since')),
            ...(until ? { until: instant(until) } : {}),
          },
        }),
      );
      done(t('events.replayed', { count: queued }));
    });
  };
  const remove = () => {
    if (!data || !window.confirm(t('events.confirmDelete', { url: data.url }))) return;
    void action.run(async () => {
      must(await api.DELETE('/admin/event-subscriptions/{id}', path));
      route('/console/events');
    });
  };

  return (
    <Page title={t('events.subscription')}>
      <p>
        <a href="/console/events">← {t('nav.events')}</a>
      </p>
      <Failure error={error} />
      {secret && (
        <OnceSecret label={t('events.newSecret')} value={secret} onDone={() => setSecret(null)} />
      )}
      {data && (
        <>
          <section class="panel" aria-labelledby="subscription-state">
            <h2 id="subscription-state">{data.url}</h2>
            <p>
              <SubscriptionState subscription={data} /> · {instanceName(data.instance_id)}
              {data.previous_secret_expires_at && (
                <span class="muted">
                  {' '}
                  · {t('events.previousSecret')} <At iso={data.previous_secret_expires_at} />
                </span>
              )}
            </p>
            <div class="row">
              <button type="button" class="secondary" disabled={action.busy} onClick={ping}>
                {t('events.ping')}
              </button>
              <button type="button" class="secondary" disabled={action.busy} onClick={toggle}>
                {data.enabled ? t('events.disable') : t('events.enable')}
              </button>
              <button type="button" class="secondary" disabled={action.busy} onClick={rotate}>
                {t('events.rotate')}
              </button>
              <button type="button" class="danger" disabled={action.busy} onClick={remove}>
                {t('admin.delete')}
              </button>
            </div>
            <Failure error={action.error} />
            {notice && <p role="status">{notice}</p>}
          </section>
          <form
            key={data.updated_at}
            class="panel form"
            onSubmit={save}
            aria-labelledby="edit-subscription"
          >
            <h2 id="edit-subscription">{t('admin.edit')}</h2>
            <label>
              {t('events.url')}
              <input name="url" type="url" required defaultValue={data.url} />
            </label>
            <TypeChoice chosen={data.event_types} />
            <label>
              {t('events.description')}
              <input name="description" defaultValue={data.description ?? ''} />
            </label>
            <button type="submit" disabled={action.busy}>
              {t('admin.save')}
            </button>
          </form>
          <form class="panel form inline" onSubmit={replay} aria-labelledby="replay-title">
            <h2 id="replay-title">{t('events.replay')}</h2>
            <label>
              {t('events.since')}
              <input name="since" type="datetime-local" required />
            </label>
            <label>
              {t('events.until')}
              <input name="until" type="datetime-local" />
            </label>
            <button type="submit" class="secondary" disabled={action.busy}>
              {t('events.replaySend')}
            </button>
          </form>
          <Deliveries id={id} round={round} />
        </>
      )}
    </Page>
  );
}
