import type { FieldError } from '../common/app.exception.js';
import type { PlatformTemplateComponent } from '../platform/platform.types.js';

/** How a template names its variables: `{{1}}`, `{{2}}` or `{{first_name}}`. */
export type ParameterFormat = 'positional' | 'named';

/** One parameter a send's component gives, as /send/template takes it. */
export interface SendParameter {
  type: string;
  text?: string;
  parameter_name?: string;
  image?: unknown;
  video?: unknown;
  document?: unknown;
  currency?: { fallback_value?: unknown };
  date_time?: { fallback_value?: unknown };
  payload?: string;
  coupon_code?: string;
  action?: Record<string, unknown>;
}

/** One component of a template send. */
export interface SendComponent {
  type: string;
  sub_type?: string;
  index?: string;
  parameters?: SendParameter[];
}

/** A place of a template a send must fill. */
export interface TemplateSlot {
  component: 'header' | 'body' | 'button';
  /** A button's position. */
  index?: number;
  /**
   * `text` (variables), the header's media type, or a copy-code button's
   * `coupon_code`.
   */
  kind: 'text' | 'image' | 'video' | 'document' | 'coupon_code';
  /** The variables in order: '1', '2' or names; empty for a media header. */
  names: string[];
}

/** A value the platform gave as text (a number is text too); anything else: empty. */
export function asText(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : '';
}

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g;
const MEDIA_FORMATS = new Set(['IMAGE', 'VIDEO', 'DOCUMENT']);

/** The distinct variables of a text, in order of first use (positional ones by number). */
export function placeholders(text: string | undefined): string[] {
  const names: string[] = [];
  for (const match of (text ?? '').matchAll(PLACEHOLDER)) {
    if (!names.includes(match[1])) names.push(match[1]);
  }
  return names.every((name) => /^\d+$/.test(name))
    ? names.sort((a, b) => Number(a) - Number(b))
    : names;
}

/** The format the platform gave, or the one the variables show. */
export function parameterFormatOf(
  declared: string | undefined | null,
  components: PlatformTemplateComponent[],
): ParameterFormat {
  if (declared) return declared.toLowerCase() === 'named' ? 'named' : 'positional';
  const names = components.flatMap((component) => placeholders(component.text));
  return names.some((name) => !/^\d+$/.test(name)) ? 'named' : 'positional';
}

const typeOf = (component: PlatformTemplateComponent): string =>
  String(component.type ?? '').toUpperCase();

/** Every place a send of the template must fill. */
export function templateSlots(components: PlatformTemplateComponent[]): TemplateSlot[] {
  const slots: TemplateSlot[] = [];
  for (const component of components) {
    const type = typeOf(component);
    if (type === 'HEADER') {
      const format = String(component.format ?? 'TEXT').toUpperCase();
      if (MEDIA_FORMATS.has(format)) {
        slots.push({
          component: 'header',
          kind: format.toLowerCase() as TemplateSlot['kind'],
          names: [],
        });
      } else if (placeholders(component.text).length > 0) {
        slots.push({ component: 'header', kind: 'text', names: placeholders(component.text) });
      }
    } else if (type === 'BODY' && placeholders(component.text).length > 0) {
      slots.push({ component: 'body', kind: 'text', names: placeholders(component.text) });
    } else if (type === 'BUTTONS') {
      (component.buttons ?? []).forEach((button, index) => {
        const url = typeof button.url === 'string' ? button.url : '';
        const buttonType = String(button.type).toUpperCase();
        // A URL with a variable, and an authentication template's code button
        // (the code goes as a URL button's text): one text parameter each.
        if ((buttonType === 'URL' && placeholders(url).length > 0) || buttonType === 'OTP') {
          slots.push({ component: 'button', index, kind: 'text', names: ['1'] });
        } else if (buttonType === 'COPY_CODE') {
          slots.push({ component: 'button', index, kind: 'coupon_code', names: ['1'] });
        }
      });
    }
  }
  return slots;
}

const variable = (name: string): string => `{{${name}}}`;

function slotLabel(slot: TemplateSlot): string {
  return slot.component === 'button' ? `button ${slot.index}` : slot.component;
}

/** The send's component that fills `slot`, and its position in `components`. */
function findComponent(
  components: SendComponent[],
  slot: Pick<TemplateSlot, 'component' | 'index'>,
): number {
  return components.findIndex(
    (component) =>
      component.type === slot.component &&
      (slot.component !== 'button' || Number(component.index ?? -1) === slot.index),
  );
}

/**
 * What is missing from or extra in a send's components for the template,
 * each naming the field (`components[1].parameters`) as the request has it.
 */
export function checkSendComponents(
  slots: TemplateSlot[],
  format: ParameterFormat,
  components: SendComponent[],
): FieldError[] {
  const errors: FieldError[] = [];
  for (const slot of slots) {
    const at = findComponent(components, slot);
    const label = slotLabel(slot);
    if (at < 0) {
      const wants =
        slot.kind === 'text'
          ? `${slot.names.length} parameter${slot.names.length === 1 ? '' : 's'} (${slot.names.map(variable).join(', ')})`
          : `${slot.kind === 'coupon_code' ? 'a' : 'an'} ${slot.kind} parameter`;
      errors.push({
        field: 'components',
        message: `the template's ${label} takes ${wants}: add a ${slot.component} component${slot.component === 'button' ? ` with index "${slot.index}"` : ''}`,
      });
      continue;
    }
    const given = components[at].parameters ?? [];
    const field = `components[${at}].parameters`;
    if (slot.kind !== 'text') {
      if (given.length !== 1 || given[0].type !== slot.kind) {
        errors.push({ field, message: `the ${label} takes one ${slot.kind} parameter` });
      }
      continue;
    }
    if (format === 'named' && slot.component !== 'button') {
      const names = given.map((parameter) => parameter.parameter_name);
      const missing = slot.names.filter((name) => !names.includes(name));
      const extra = names.filter((name) => name === undefined || !slot.names.includes(name));
      if (missing.length > 0) {
        errors.push({
          field,
          message: `the ${label} is missing ${missing.map((name) => `parameter_name "${name}"`).join(', ')}`,
        });
      }
      if (extra.length > 0) {
        errors.push({
          field,
          message: `the ${label} has no variable ${extra.map((name) => (name === undefined ? 'for a parameter without parameter_name' : `"${name}"`)).join(', ')} (it has ${slot.names.map(variable).join(', ')})`,
        });
      }
    } else if (given.length !== slot.names.length) {
      errors.push({
        field,
        message: `the ${label} takes ${slot.names.length} parameter${slot.names.length === 1 ? '' : 's'} (${slot.names.map(variable).join(', ')}); ${given.length} given`,
      });
    }
  }
  components.forEach((component, at) => {
    if (component.type === 'footer' || (component.parameters ?? []).length === 0) return;
    // A quick reply's payload and a flow button's action fill no variable: they go as given.
    if (
      component.type === 'button' &&
      !component.parameters?.some((p) => p.type !== 'payload' && p.type !== 'action')
    ) {
      return;
    }
    const filled = slots.some(
      (slot) =>
        slot.component === component.type &&
        (slot.component !== 'button' || Number(component.index ?? -1) === slot.index),
    );
    if (!filled) {
      errors.push({
        field: `components[${at}]`,
        message: `the template's ${component.type}${component.type === 'button' ? ` ${component.index ?? ''}`.trimEnd() : ''} takes no parameters`,
      });
    }
  });
  return errors;
}

/** A parameter as a customer reads it. */
function shown(parameter: SendParameter | undefined): string | undefined {
  if (!parameter) return undefined;
  switch (parameter.type) {
    case 'text':
      return parameter.text;
    case 'currency':
      return asText(parameter.currency?.fallback_value);
    case 'date_time':
      return asText(parameter.date_time?.fallback_value);
    default:
      return undefined;
  }
}

function fill(
  text: string,
  format: ParameterFormat,
  parameters: SendParameter[],
  names: string[],
): string {
  return text.replace(PLACEHOLDER, (whole, name: string) => {
    const parameter =
      format === 'named'
        ? parameters.find((p) => p.parameter_name === name)
        : parameters[names.indexOf(name)];
    return shown(parameter) ?? whole;
  });
}

/** What the customer sees of a template send. */
export interface RenderedTemplate {
  header: string | null;
  /** The header's media type when it is one (image, video, document, location). */
  header_media: string | null;
  body: string;
  footer: string | null;
  buttons: Array<{ type: string; text: string; url?: string; phone_number?: string }>;
}

/** The template's text with a send's parameters put in (variables left as they are where none is given). */
export function renderTemplate(
  components: PlatformTemplateComponent[],
  format: ParameterFormat,
  send: SendComponent[],
): RenderedTemplate {
  const rendered: RenderedTemplate = {
    header: null,
    header_media: null,
    body: '',
    footer: null,
    buttons: [],
  };
  const parametersOf = (slot: Pick<TemplateSlot, 'component' | 'index'>): SendParameter[] => {
    const at = findComponent(send, slot);
    return at < 0 ? [] : (send[at].parameters ?? []);
  };
  for (const component of components) {
    const type = typeOf(component);
    const text = typeof component.text === 'string' ? component.text : '';
    if (type === 'HEADER') {
      const headerFormat = String(component.format ?? 'TEXT').toUpperCase();
      if (headerFormat === 'TEXT') {
        rendered.header = fill(
          text,
          format,
          parametersOf({ component: 'header' }),
          placeholders(text),
        );
      } else {
        rendered.header_media = headerFormat.toLowerCase();
      }
    } else if (type === 'BODY') {
      rendered.body = fill(text, format, parametersOf({ component: 'body' }), placeholders(text));
    } else if (type === 'FOOTER') {
      rendered.footer = text;
    } else if (type === 'BUTTONS') {
      (component.buttons ?? []).forEach((button, index) => {
        const entry: RenderedTemplate['buttons'][number] = {
          type: asText(button.type).toLowerCase(),
          text: asText(button.text),
        };
        if (typeof button.url === 'string') {
          entry.url = fill(
            button.url,
            'positional',
            parametersOf({ component: 'button', index }),
            placeholders(button.url),
          );
        }
        if (typeof button.phone_number === 'string') entry.phone_number = button.phone_number;
        rendered.buttons.push(entry);
      });
    }
  }
  return rendered;
}

/**
 * A send's components for one recipient: each text place filled from
 * `values` where they give all of its variables (`1`, `2` or names for the
 * body, `header.1` or `header.name` for the header, `button.0` for a URL
 * button's suffix), otherwise the shared component given (a media header,
 * a value every recipient gets).
 */
export function componentsFor(
  slots: TemplateSlot[],
  format: ParameterFormat,
  shared: SendComponent[],
  values: Record<string, string>,
): SendComponent[] {
  const components: SendComponent[] = [];
  for (const slot of slots) {
    const keys =
      slot.component === 'button'
        ? [`button.${slot.index}`]
        : slot.names.map((name) =>
            slot.component === 'header'
              ? `header.${name}`
              : Object.hasOwn(values, name)
                ? name
                : `body.${name}`,
          );
    // Own keys only: a variable named like an Object method is not filled by it.
    const given = keys.map((key) => (Object.hasOwn(values, key) ? values[key] : undefined));
    if (slot.kind === 'coupon_code' && given[0] !== undefined) {
      components.push({
        type: 'button',
        sub_type: 'copy_code',
        index: String(slot.index),
        parameters: [{ type: 'coupon_code', coupon_code: given[0] }],
      });
      continue;
    }
    if (slot.kind === 'text' && given.every((value) => value !== undefined)) {
      const parameters: SendParameter[] = given.map((text, i) => ({
        type: 'text',
        text,
        ...(format === 'named' && slot.component !== 'button'
          ? { parameter_name: slot.names[i] }
          : {}),
      }));
      components.push(
        slot.component === 'button'
          ? { type: 'button', sub_type: 'url', index: String(slot.index), parameters }
          : { type: slot.component, parameters },
      );
      continue;
    }
    const at = findComponent(shared, slot);
    if (at >= 0) components.push(shared[at]);
  }
  // A shared component no variable of the template takes (a quick reply's payload) goes as given.
  for (const component of shared) {
    if (
      !components.includes(component) &&
      !slots.some((slot) => findComponent([component], slot) === 0)
    ) {
      components.push(component);
    }
  }
  return components;
}
