import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, must } from '../api/client';
import { At, Failure, Page, useAction, useLoad } from '../admin/ui';
import { t } from '../i18n';
import { InstancePicker, shownInstance } from '../instance';
import { session } from '../session';
import {
  componentsFor,
  labelOf,
  mediaSlots,
  SHOWN_VARIABLES,
  variablesOf,
  writtenView,
  type Template,
  type TemplateView,
} from './catalogue';
import { MessageBubble, QualityBadge, StatusBadge } from './view';

/** The text a customer would read, for values typed here (the template's examples at first). */
function Preview({ template, instance }: { template: Template; instance: string }) {
  const variables = variablesOf(template);
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(variables.map((v) => [v.key, v.example])),
  );
  const [view, setView] = useState<TemplateView | null>(null);
  const preview = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void preview.run(async () => {
      setView(
        must(
          await api.POST('/templates/{id}/preview', {
            params: { path: { id: template.id } },
            body: { instance_id: instance, components: componentsFor(template, values) },
          }),
        ),
      );
    });
  };
  return (
    <form class="panel form" onSubmit={submit} aria-labelledby="preview-title">
      <h2 id="preview-title">{t('templates.preview')}</h2>
      {variables.length === 0 ? (
        <p class="muted">{t('templates.noVariables')}</p>
      ) : (
        variables.map((variable) => (
          <label key={variable.key}>
            {variable.label}
            <input
              value={values[variable.key] ?? ''}
              onInput={(e) => setValues({ ...values, [variable.key]: e.currentTarget.value })}
            />
          </label>
        ))
      )}
      {mediaSlots(template).length > 0 && <p class="muted">{t('templates.mediaNotFilled')}</p>}
      <Failure error={preview.error} />
      <button type="submit" disabled={preview.busy}>
        {t('templates.render')}
      </button>
      {view && <MessageBubble view={view} label={t('templates.rendered')} />}
    </form>
  );
}

/** A template: how it is written, its state, a preview with values, and delete. */
export function TemplateDetail({ id }: { id: string }) {
  const { route } = useLocation();
  const instance = shownInstance(session.value!);
  const { data, error } = useLoad(async () => {
    if (!instance) return undefined;
    return must(
      await api.GET('/templates/{template}', {
        params: { path: { template: id }, query: { instance_id: instance } },
      }),
    );
  }, [id, instance]);
  const remove = useAction();
  const deleteIt = () => {
    if (!data?.name || !window.confirm(t('templates.confirmDelete', { name: data.name }))) return;
    void remove.run(async () => {
      must(
        await api.DELETE('/templates/{template}', {
          params: {
            path: { template: data.name! },
            query: {
              instance_id: instance!,
              ...(data.language ? { language: data.language } : {}),
            },
          },
        }),
      );
      route('/console/templates');
    });
  };
  const title = data ? `${data.name ?? data.id} · ${data.language ?? ''}` : t('templates.template');
  return (
    <Page title={title} actions={<InstancePicker session={session.value!} />}>
      <p>
        <a href="/console/templates">← {t('nav.templates')}</a>
      </p>
      <Failure error={error} />
      {data && (
        <>
          <section class="panel" aria-labelledby="template-state">
            <h2 id="template-state">{t('templates.state')}</h2>
            <dl class="facts">
              <dt>{t('templates.status')}</dt>
              <dd>
                <StatusBadge status={data.status} /> <At iso={data.status_at} />
              </dd>
              {data.reason && data.reason !== 'NONE' && (
                <>
                  <dt>{t('templates.reason')}</dt>
                  <dd class="error-text">{data.reason}</dd>
                </>
              )}
              <dt>{t('templates.category')}</dt>
              <dd>
                {labelOf('categories', data.category)}
                {data.pending_category && (
                  <span class="warning block">
                    {t('templates.pendingCategory', {
                      category: labelOf('categories', data.pending_category),
                    })}
                  </span>
                )}
              </dd>
              <dt>{t('templates.quality')}</dt>
              <dd>
                <QualityBadge quality={data.quality} />
              </dd>
              <dt>{t('templates.parameterFormat')}</dt>
              <dd>
                {data.parameter_format
                  ? t(`templates.formats.${data.parameter_format.toLowerCase()}`, {
                      ...SHOWN_VARIABLES,
                      defaultValue: data.parameter_format,
                    })
                  : '—'}
              </dd>
              <dt>{t('templates.variables')}</dt>
              <dd>
                {variablesOf(data)
                  .map((v) => v.label)
                  .join(', ') || '—'}
              </dd>
              <dt>{t('templates.syncedAt')}</dt>
              <dd>
                <At iso={data.synced_at} />
              </dd>
            </dl>
            <button type="button" class="danger" disabled={remove.busy} onClick={deleteIt}>
              {t('templates.delete')}
            </button>
            <Failure error={remove.error} />
          </section>
          <section class="panel" aria-labelledby="template-written">
            <h2 id="template-written">{t('templates.written')}</h2>
            {data.components ? (
              <MessageBubble view={writtenView(data)} label={t('templates.written')} />
            ) : (
              <p class="muted">{t('templates.notRead')}</p>
            )}
          </section>
          {data.components && instance && <Preview template={data} instance={instance} />}
        </>
      )}
    </Page>
  );
}
