import type { Schemas } from '../api/client';
import { t } from '../i18n';

export type Template = Schemas['TemplateDto'];
export type Slot = Schemas['TemplateSlotDto'];
/** What a customer reads of a template: its header, body, footer and buttons. */
export type TemplateView = Schemas['TemplatePreviewDto'];
type SendComponent = Schemas['TemplateComponentDto'];

/** The statuses GET /templates filters by, the usual ones first. */
export const STATUSES = [
  'APPROVED',
  'PENDING',
  'REJECTED',
  'PAUSED',
  'DISABLED',
  'IN_APPEAL',
  'PENDING_DELETION',
  'DELETED',
  'LIMIT_EXCEEDED',
  'ARCHIVED',
] as const;
export const CATEGORIES = ['MARKETING', 'UTILITY', 'AUTHENTICATION'] as const;

/** A value the platform names in capitals (a status, a category, a quality), as the language says it. */
export const labelOf = (
  group: 'statuses' | 'categories' | 'qualities',
  value: string | null,
): string => (value ? t(`templates.${group}.${value}`, { defaultValue: value }) : '—');

/** Variables as the texts that explain them show them (i18next would read `{{1}}` as its own). */
export const SHOWN_VARIABLES = { v1: '{{1}}', v2: '{{2}}', vname: '{{first_name}}' };

/** One variable a send fills: its key in a recipient's parameters, its label, its example. */
export interface Variable {
  /** `1`, `first_name` (body), `header.1` (header), `button.0` (a URL button's suffix). */
  key: string;
  label: string;
  example: string;
}

/** The template's text variables, in the order of its components. */
export function variablesOf(template: Pick<Template, 'parameters'>): Variable[] {
  return template.parameters.flatMap((slot) => {
    if (slot.kind !== 'text') return [];
    if (slot.component === 'button') {
      const position = (slot.index ?? 0) + 1;
      return [
        {
          key: `button.${slot.index ?? 0}`,
          label: t('templates.variable.button', { position }),
          example: slot.examples[0] ?? '',
        },
      ];
    }
    return slot.names.map((name, i) => ({
      key: slot.component === 'header' ? `header.${name}` : name,
      label: t(`templates.variable.${slot.component}`, { variable: `{{${name}}}` }),
      example: slot.examples[i] ?? '',
    }));
  });
}

/** Places a send must fill that a text cannot (a media header): the console does not fill them. */
export const mediaSlots = (template: Pick<Template, 'parameters'>): Slot[] =>
  template.parameters.filter((slot) => slot.kind !== 'text');

/**
 * A send's components (as /send/template and the preview take them) from a
 * recipient's parameters: a component only where every one of its variables
 * has a value, as the service builds a campaign's sends (an empty cell is a
 * parameter not given).
 */
export function componentsFor(
  template: Pick<Template, 'parameters' | 'parameter_format'>,
  values: Record<string, string>,
): SendComponent[] {
  const named = template.parameter_format?.toLowerCase() === 'named';
  const given = (key: string): string | undefined => (values[key] ? values[key] : undefined);
  const components: SendComponent[] = [];
  for (const slot of template.parameters) {
    if (slot.kind !== 'text') continue;
    if (slot.component === 'button') {
      const text = given(`button.${slot.index ?? 0}`);
      if (text === undefined) continue;
      components.push({
        type: 'button',
        sub_type: 'url',
        index: String(slot.index ?? 0),
        parameters: [{ type: 'text', text }],
      });
      continue;
    }
    const texts = slot.names.map((name) =>
      given(slot.component === 'header' ? `header.${name}` : name),
    );
    if (texts.some((text) => text === undefined)) continue;
    components.push({
      type: slot.component,
      parameters: texts.map((text, i) => ({
        type: 'text',
        text,
        ...(named ? { parameter_name: slot.names[i] } : {}),
      })),
    });
  }
  return components;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** The template as it is written (its variables unfilled), in the shape of a preview. */
export function writtenView(template: Pick<Template, 'components'>): TemplateView {
  const view: TemplateView = {
    header: null,
    header_media: null,
    body: '',
    footer: null,
    buttons: [],
  };
  for (const component of template.components ?? []) {
    const type = text(component.type).toUpperCase();
    if (type === 'HEADER') {
      const format = text(component.format).toUpperCase() || 'TEXT';
      if (format === 'TEXT') view.header = text(component.text);
      else view.header_media = format.toLowerCase();
    } else if (type === 'BODY') {
      view.body = text(component.text);
    } else if (type === 'FOOTER') {
      view.footer = text(component.text);
    } else if (type === 'BUTTONS' && Array.isArray(component.buttons)) {
      view.buttons = (component.buttons as Array<Record<string, unknown>>).map((button) => ({
        type: text(button.type).toLowerCase(),
        text: text(button.text),
        ...(typeof button.url === 'string' ? { url: button.url } : {}),
        ...(typeof button.phone_number === 'string' ? { phone_number: button.phone_number } : {}),
      }));
    }
  }
  return view;
}
