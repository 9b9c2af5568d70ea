import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, must, type Schemas } from '../api/client';
import {
  Failure,
  field,
  FieldError,
  FormFailure,
  invalid,
  Page,
  placeProblems,
  useAction,
  useLoad,
  type FieldProblem,
} from '../admin/ui';
import { t } from '../i18n';
import { InstancePicker, shownInstance } from '../instance';
import { session } from '../session';
import { mediaSlots, variablesOf, type Template } from '../templates/catalogue';
import { ListFile } from './list-file';
import { FirstMessages } from './first-messages';
import { ColumnMapping, guessMapping, type Mapping } from './mapping';
import type { CsvHead } from './csv';

type CsvCampaign = Schemas['CsvCampaignDto'];

/** The most pages of approved templates read for the choice (100 a page). */
const TEMPLATE_PAGES = 10;

/** Every approved template of the instance's catalogue, by name. */
async function approvedTemplates(instance: string): Promise<Template[]> {
  const found: Template[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < TEMPLATE_PAGES; page++) {
    const answer: Schemas['TemplatePageDto'] = must(
      await api.GET('/templates', {
        params: {
          query: {
            instance_id: instance,
            status: 'APPROVED',
            limit: 100,
            ...(cursor ? { cursor } : {}),
          },
        },
      }),
    );
    found.push(...answer.data);
    cursor = answer.next_cursor;
    if (!cursor) break;
  }
  return found;
}

/** Which of the form's fields an error of POST /campaigns/upload is about. */
function placeOf(field: string): string | null {
  if (field === 'file' || field === 'body' || field === 'campaign') return 'file';
  if (field === 'campaign.name') return 'name';
  if (field === 'campaign.template_name' || field === 'campaign.language') return 'template';
  if (field === 'campaign.start_at') return 'startAt';
  if (field === 'campaign.rate_per_s') return 'rate';
  if (field === 'campaign.columns' || field === 'campaign.columns.to') return 'to';
  if (field === 'campaign.columns.recipient') return 'recipient';
  const parameter = /^campaign\.columns\.parameters\.(.+)$/.exec(field);
  return parameter ? `param:${parameter[1]}` : null;
}

/** An error that is not a field's (413, a template refused) as the field it is about. */
function asProblems(code: string | null, message: string | null): FieldProblem[] {
  if (!message) return [];
  if (code === 'payload_too_large') return [{ field: 'file', message }];
  if (code === 'template_not_found' || code === 'template_not_approved') {
    return [{ field: 'campaign.template_name', message }];
  }
  return [];
}

/** A datetime-local value as an ISO instant (the browser's zone). */
const instant = (local: string): string => new Date(local).toISOString();

/**
 * A new campaign from a CSV: the list read in the browser (header, first
 * rows), an approved template, which column fills what, the first messages
 * as they will read, then the upload (POST /campaigns/upload) with the file.
 */
export function NewCampaign() {
  const { route } = useLocation();
  const instance = shownInstance(session.value!);
  const [file, setFile] = useState<File | null>(null);
  const [head, setHead] = useState<CsvHead | null>(null);
  const [templateId, setTemplateId] = useState('');
  const [mapping, setMapping] = useState<Mapping>({ to: '', recipient: '', parameters: {} });
  const [local, setLocal] = useState<FieldProblem[]>([]);
  const templates = useLoad(async () => (instance ? approvedTemplates(instance) : []), [instance]);
  const chosen = useLoad(async () => {
    if (!instance || !templateId) return null;
    return must(
      await api.GET('/templates/{template}', {
        params: { path: { template: templateId }, query: { instance_id: instance } },
      }),
    );
  }, [instance, templateId]);
  const template = chosen.data && chosen.data.id === templateId ? chosen.data : null;
  const variables = template ? variablesOf(template) : [];

  const upload = useAction();
  const problems = [
    ...local,
    ...(upload.problems.length > 0 ? upload.problems : asProblems(upload.code, upload.error)),
  ];
  const { at, rest, placed } = placeProblems(problems, placeOf);

  const listRead = (next: File | null, read: CsvHead | null) => {
    setFile(next);
    setHead(read);
  };
  // A template or a list chosen: each of its variables gets the column named like it, if any.
  useEffect(() => {
    if (template && head) setMapping((was) => guessMapping(head.columns, variables, was));
  }, [template?.id, head]);

  const submit = (event: Event) => {
    event.preventDefault();
    if (!file || !template?.name || !instance) return;
    if (!mapping.to && !mapping.recipient) {
      setLocal([{ field: 'campaign.columns', message: t('campaigns.needAddress') }]);
      return;
    }
    setLocal([]);
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => field(form, name);
    const campaign: CsvCampaign = {
      name: text('name'),
      template_name: template.name,
      ...(template.language ? { language: template.language } : {}),
      ...(text('start_at') ? { start_at: instant(text('start_at')) } : {}),
      ...(text('rate_per_s') ? { rate_per_s: Number(text('rate_per_s')) } : {}),
      start: form.get('start') === 'on',
      columns: {
        ...(mapping.to ? { to: mapping.to } : {}),
        ...(mapping.recipient ? { recipient: mapping.recipient } : {}),
        // The OpenAPI type of a map of text is an open object.
        parameters: mapping.parameters as CsvCampaign['columns']['parameters'],
      },
    };
    void upload.run(async () => {
      const created = must(
        await api.POST('/campaigns/upload', {
          params: { query: { instance_id: instance } },
          body: { campaign, file: file.name },
          // The campaign's JSON first, then the file: the service reads the file as it arrives.
          bodySerializer: () => {
            const body = new FormData();
            body.append('campaign', JSON.stringify(campaign));
            body.append('file', file, file.name);
            return body;
          },
        }),
      );
      route(`/console/campaigns/${created.id}`);
    });
  };

  return (
    <Page title={t('campaigns.new')} actions={<InstancePicker session={session.value!} />}>
      <p>
        <a href="/console/campaigns">← {t('nav.campaigns')}</a>
      </p>
      <form class="wizard" onSubmit={submit} aria-label={t('campaigns.new')}>
        <ListFile head={head} onRead={listRead} error={at('file')} />
        <section class="panel form" aria-labelledby="step-template">
          <h2 id="step-template">{t('campaigns.stepTemplate')}</h2>
          <label for="campaign-template">{t('campaigns.template')}</label>
          <select
            id="campaign-template"
            value={templateId}
            required
            onChange={(e) => setTemplateId(e.currentTarget.value)}
            {...invalid('campaign-template', at('template'))}
          >
            <option value="">{t('campaigns.chooseTemplate')}</option>
            {templates.data?.map((approved) => (
              <option key={approved.id} value={approved.id}>
                {approved.name} ({approved.language})
              </option>
            ))}
          </select>
          <FieldError id="campaign-template" error={at('template')} />
          {templates.data?.length === 0 && <p class="muted">{t('campaigns.noApproved')}</p>}
          <Failure error={templates.error ?? chosen.error} />
          {template && mediaSlots(template).length > 0 && (
            <p class="warning">{t('campaigns.mediaHeader')}</p>
          )}
        </section>
        {head && template && (
          <section class="panel form" aria-labelledby="step-columns">
            <h2 id="step-columns">{t('campaigns.stepColumns')}</h2>
            <ColumnMapping
              columns={head.columns}
              variables={variables}
              mapping={mapping}
              onChange={setMapping}
              at={at}
            />
          </section>
        )}
        {head && template && instance && (
          <section class="panel" aria-labelledby="step-preview">
            <h2 id="step-preview">{t('campaigns.stepPreview')}</h2>
            <FirstMessages
              template={template}
              instance={instance}
              rows={head.rows}
              mapping={mapping}
            />
          </section>
        )}
        <section class="panel form" aria-labelledby="step-send">
          <h2 id="step-send">{t('campaigns.stepSend')}</h2>
          <label>
            {t('campaigns.name')}
            <input name="name" required maxLength={200} {...invalid('campaign-name', at('name'))} />
          </label>
          <FieldError id="campaign-name" error={at('name')} />
          <label>
            {t('campaigns.startAtOptional')}
            <input
              name="start_at"
              type="datetime-local"
              {...invalid('campaign-start', at('startAt'))}
            />
          </label>
          <FieldError id="campaign-start" error={at('startAt')} />
          <label>
            {t('campaigns.rateOptional')}
            <input
              name="rate_per_s"
              type="number"
              min="0.1"
              max="1000"
              step="0.1"
              inputMode="decimal"
              {...invalid('campaign-rate', at('rate'))}
            />
          </label>
          <p class="muted hint">{t('campaigns.rateHint')}</p>
          <FieldError id="campaign-rate" error={at('rate')} />
          <label class="check">
            <input name="start" type="checkbox" defaultChecked />
            {t('campaigns.startNow')}
          </label>
          <FormFailure
            error={upload.error ?? (local.length > 0 ? t('campaigns.needAddress') : null)}
            placed={placed}
            rest={rest}
          />
          <button type="submit" disabled={upload.busy || !file || !template}>
            {upload.busy ? t('campaigns.uploading') : t('campaigns.create')}
          </button>
        </section>
      </form>
    </Page>
  );
}
