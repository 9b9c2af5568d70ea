import { useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, must, type Schemas } from '../api/client';
import { FieldError, FormFailure, invalid, Page, placeProblems, useAction } from '../admin/ui';
import { t } from '../i18n';
import { InstancePicker, shownInstance } from '../instance';
import { session } from '../session';
import { CATEGORIES, labelOf, SHOWN_VARIABLES } from './catalogue';
import { ButtonsField, type DraftButton } from './draft-buttons';

type Draft = Schemas['CreateTemplateDto'];
type DraftComponent = Draft['components'][number];
/** The platform's example object (its OpenAPI type is an open object). */
type Example = DraftComponent['example'];

/** The variables of a text in order of first use (positional ones by number), as the service reads them. */
export function placeholders(text: string): string[] {
  const names: string[] = [];
  for (const match of text.matchAll(/\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g)) {
    if (!names.includes(match[1])) names.push(match[1]);
  }
  return names.every((name) => /^\d+$/.test(name))
    ? names.sort((a, b) => Number(a) - Number(b))
    : names;
}

/** A text's examples as the platform takes them: in order, or by name. */
function examples(
  part: 'header' | 'body',
  names: string[],
  values: Record<string, string>,
  named: boolean,
): Record<string, unknown> {
  if (named) {
    return {
      [`${part}_text_named_params`]: names.map((name) => ({
        param_name: name,
        example: values[name] ?? '',
      })),
    };
  }
  const list = names.map((name) => values[name] ?? '');
  return { [`${part}_text`]: part === 'body' ? [list] : list };
}

/**
 * Where the form shows an error of POST /templates: its fields name the
 * components as sent (`components[1].example`), which `kinds` says are which.
 */
function placeOf(kinds: string[]) {
  return (field: string): string | null => {
    if (['name', 'language', 'category'].includes(field)) return field;
    if (field === 'components' || field === 'parameter_format') return 'body';
    const match = /^components\[(\d+)\](?:\.(.*))?$/.exec(field);
    if (!match) return null;
    const rest = match[2] ?? '';
    switch (kinds[Number(match[1])]) {
      case 'HEADER':
        return rest.startsWith('example') ? 'headerExample' : 'header';
      case 'BODY':
        return rest.startsWith('example') ? 'bodyExamples' : 'body';
      case 'FOOTER':
        return 'footer';
      case 'BUTTONS': {
        const button = /^buttons\[(\d+)\]\.?(\w*)/.exec(rest);
        if (!button) return 'buttons';
        const part = button[2] === 'url' || button[2] === 'example' ? button[2] : 'text';
        return `button${button[1]}.${part}`;
      }
      default:
        return null;
    }
  };
}

/** Inputs for the example value of each variable of a text. */
function Examples({
  id,
  names,
  values,
  onChange,
  error,
}: {
  id: string;
  names: string[];
  values: Record<string, string>;
  onChange: (values: Record<string, string>) => void;
  error: string | undefined;
}) {
  if (names.length === 0) return null;
  return (
    <>
      <fieldset {...invalid(id, error)}>
        <legend>{t('templates.examples')}</legend>
        {names.map((name) => (
          <label key={name}>
            {t('templates.exampleOf', { variable: `{{${name}}}` })}
            <input
              value={values[name] ?? ''}
              required
              onInput={(e) => onChange({ ...values, [name]: e.currentTarget.value })}
            />
          </label>
        ))}
      </fieldset>
      <FieldError id={id} error={error} />
    </>
  );
}

/** A new template: submitted for the platform's review; the API's refusals shown by their fields. */
export function NewTemplate() {
  const { route } = useLocation();
  const instance = shownInstance(session.value!);
  const [name, setName] = useState('');
  const [language, setLanguage] = useState('pt_BR');
  const [category, setCategory] = useState<Draft['category']>('UTILITY');
  const [header, setHeader] = useState('');
  const [headerExamples, setHeaderExamples] = useState<Record<string, string>>({});
  const [body, setBody] = useState('');
  const [bodyExamples, setBodyExamples] = useState<Record<string, string>>({});
  const [footer, setFooter] = useState('');
  const [buttons, setButtons] = useState<DraftButton[]>([]);
  const sent = useRef<string[]>([]);
  const create = useAction();
  const { at, rest, placed } = placeProblems(create.problems, placeOf(sent.current));

  const headerNames = placeholders(header);
  const bodyNames = placeholders(body);
  const named = [...headerNames, ...bodyNames].some((n) => !/^\d+$/.test(n));

  const draft = (): Draft => {
    const components: DraftComponent[] = [];
    if (header.trim()) {
      components.push({
        type: 'HEADER',
        format: 'TEXT',
        text: header,
        ...(headerNames.length > 0
          ? { example: examples('header', headerNames, headerExamples, named) as Example }
          : {}),
      });
    }
    components.push({
      type: 'BODY',
      text: body,
      ...(bodyNames.length > 0
        ? { example: examples('body', bodyNames, bodyExamples, named) as Example }
        : {}),
    });
    if (footer.trim()) components.push({ type: 'FOOTER', text: footer });
    if (buttons.length > 0) {
      components.push({
        type: 'BUTTONS',
        buttons: buttons.map((button) =>
          button.type === 'URL'
            ? {
                type: 'URL',
                text: button.text,
                url: button.url,
                // The platform's example is the whole URL with its variable filled.
                ...(placeholders(button.url).length > 0
                  ? { example: [button.url.replace(/\{\{\s*1\s*\}\}/, button.example)] }
                  : {}),
              }
            : { type: 'QUICK_REPLY', text: button.text },
        ),
      });
    }
    return {
      instance_id: instance!,
      name: name.trim(),
      language: language.trim(),
      category,
      parameter_format: named ? 'named' : 'positional',
      components,
    };
  };

  const submit = (event: Event) => {
    event.preventDefault();
    const body = draft();
    sent.current = body.components.map((component) => component.type);
    void create.run(async () => {
      const created = must(await api.POST('/templates', { body }));
      route(`/console/templates/${created.id}`);
    });
  };

  return (
    <Page title={t('templates.new')} actions={<InstancePicker session={session.value!} />}>
      <p>
        <a href="/console/templates">← {t('nav.templates')}</a>
      </p>
      <form class="panel form" onSubmit={submit} aria-labelledby="page-title">
        <p class="muted">{t('templates.newHelp')}</p>
        <label>
          {t('templates.name')}
          <input
            value={name}
            required
            autocomplete="off"
            onInput={(e) => setName(e.currentTarget.value)}
            {...invalid('template-name', at('name'))}
          />
        </label>
        <p class="muted hint">{t('templates.nameHint')}</p>
        <FieldError id="template-name" error={at('name')} />
        <label>
          {t('templates.language')}
          <input
            value={language}
            required
            autocomplete="off"
            onInput={(e) => setLanguage(e.currentTarget.value)}
            {...invalid('template-language', at('language'))}
          />
        </label>
        <FieldError id="template-language" error={at('language')} />
        <label>
          {t('templates.category')}
          <select
            value={category}
            onChange={(e) => setCategory(e.currentTarget.value as Draft['category'])}
            {...invalid('template-category', at('category'))}
          >
            {CATEGORIES.map((c) => (
              <option key={c} value={c}>
                {labelOf('categories', c)}
              </option>
            ))}
          </select>
        </label>
        <FieldError id="template-category" error={at('category')} />
        <label>
          {t('templates.headerText')}
          <input
            value={header}
            maxLength={60}
            onInput={(e) => setHeader(e.currentTarget.value)}
            {...invalid('template-header', at('header'))}
          />
        </label>
        <FieldError id="template-header" error={at('header')} />
        <Examples
          id="template-header-examples"
          names={headerNames}
          values={headerExamples}
          onChange={setHeaderExamples}
          error={at('headerExample')}
        />
        <label>
          {t('templates.body')}
          <textarea
            value={body}
            required
            rows={4}
            maxLength={1024}
            onInput={(e) => setBody(e.currentTarget.value)}
            {...invalid('template-body', at('body'))}
          />
        </label>
        <p class="muted hint">{t('templates.bodyHint', SHOWN_VARIABLES)}</p>
        <FieldError id="template-body" error={at('body')} />
        <Examples
          id="template-body-examples"
          names={bodyNames}
          values={bodyExamples}
          onChange={setBodyExamples}
          error={at('bodyExamples')}
        />
        <label>
          {t('templates.footer')}
          <input
            value={footer}
            maxLength={60}
            onInput={(e) => setFooter(e.currentTarget.value)}
            {...invalid('template-footer', at('footer'))}
          />
        </label>
        <FieldError id="template-footer" error={at('footer')} />
        <ButtonsField buttons={buttons} onChange={setButtons} at={at} />
        <FormFailure error={create.error} placed={placed} rest={rest} />
        <button type="submit" disabled={create.busy || !instance}>
          {t('templates.submit')}
        </button>
      </form>
    </Page>
  );
}
