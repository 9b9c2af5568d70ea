import type { FieldError } from '../common/app.exception.js';
import type { PlatformTemplateDraft } from '../platform/platform.types.js';
import type { CreateTemplateDto, TemplateComponentDraftDto } from './dto/template.dto.js';
import { placeholders } from './template-params.js';

const NAMED = /^[a-z_][a-z0-9_]*$/;

/** The platform's limits on each component's text. */
const TEXT_LIMITS: Record<string, number> = { HEADER: 60, BODY: 1024, FOOTER: 60 };

/**
 * What the platform would refuse in a new template, found before the call:
 * each error names the field as the request has it (`components[1].example`).
 */
export function checkDraft(draft: CreateTemplateDto): FieldError[] {
  const errors: FieldError[] = [];
  const format = draft.parameter_format ?? 'positional';
  const seen = new Map<string, number>();
  draft.components.forEach((component, at) => {
    const field = `components[${at}]`;
    if (seen.has(component.type)) {
      errors.push({ field: `${field}.type`, message: `a template has one ${component.type}` });
    }
    seen.set(component.type, at);
    errors.push(...checkComponent(component, field, format));
  });
  if (!seen.has('BODY')) {
    errors.push({ field: 'components', message: 'must hold a BODY component' });
  }
  return errors;
}

function checkComponent(
  component: TemplateComponentDraftDto,
  field: string,
  format: 'positional' | 'named',
): FieldError[] {
  const errors: FieldError[] = [];
  const headerMedia =
    component.type === 'HEADER' && component.format !== undefined && component.format !== 'TEXT';
  if (component.type === 'BUTTONS') {
    if (!component.buttons) errors.push({ field: `${field}.buttons`, message: 'must be given' });
    (component.buttons ?? []).forEach((button, index) => {
      const at = `${field}.buttons[${index}]`;
      if (button.type === 'URL') {
        if (!button.url || !/^https?:\/\//.test(button.url)) {
          errors.push({ field: `${at}.url`, message: 'must be an http or https URL' });
        } else if (placeholders(button.url).length > 0) {
          if (!/\{\{1\}\}$/.test(button.url) || placeholders(button.url).length > 1) {
            errors.push({ field: `${at}.url`, message: 'may end with one variable, {{1}}' });
          } else if (!button.example?.length) {
            errors.push({ field: `${at}.example`, message: "must give the variable's example" });
          }
        }
      }
      if (button.type === 'PHONE_NUMBER' && !button.phone_number) {
        errors.push({ field: `${at}.phone_number`, message: 'must be given' });
      }
    });
    return errors;
  }
  if (headerMedia) {
    if (component.format !== 'LOCATION' && !Array.isArray(component.example?.header_handle)) {
      errors.push({
        field: `${field}.example`,
        message: 'a media header needs example.header_handle: an uploaded sample',
      });
    }
    return errors;
  }
  const text = component.text;
  if (text === undefined) {
    errors.push({ field: `${field}.text`, message: 'must be given' });
    return errors;
  }
  const limit = TEXT_LIMITS[component.type];
  if (text.length > limit) {
    errors.push({ field: `${field}.text`, message: `must be at most ${limit} characters` });
  }
  const names = placeholders(text);
  if (names.length === 0) return errors;
  if (component.type === 'FOOTER') {
    errors.push({ field: `${field}.text`, message: 'a footer takes no variables' });
    return errors;
  }
  if (component.type === 'HEADER' && names.length > 1) {
    errors.push({ field: `${field}.text`, message: 'a header takes one variable at most' });
  }
  if (component.type === 'BODY' && /^\s*\{\{[^}]*\}\}|\{\{[^}]*\}\}[\s.!?]*$/.test(text)) {
    // The platform refuses a body that starts or ends with a variable.
    errors.push({ field: `${field}.text`, message: 'may not start or end with a variable' });
  }
  const key = component.type === 'HEADER' ? 'header_text' : 'body_text';
  if (format === 'positional') {
    const expected = names.map((_, i) => String(i + 1));
    if (names.join() !== expected.join()) {
      errors.push({
        field: `${field}.text`,
        message: `positional variables must be {{1}} to {{${names.length}}} (found ${names.map((n) => `{{${n}}}`).join(', ')})`,
      });
      return errors;
    }
    const example: unknown = component.example?.[key];
    const values: unknown =
      component.type === 'BODY' && Array.isArray(example) ? (example as unknown[])[0] : example;
    if (!Array.isArray(values) || values.length !== names.length) {
      errors.push({
        field: `${field}.example.${key}`,
        message: `must give ${names.length} example value${names.length === 1 ? '' : 's'}, one per variable${component.type === 'BODY' ? ' (as [["…", "…"]])' : ''}`,
      });
    }
    return errors;
  }
  const bad = names.filter((name) => !NAMED.test(name));
  if (bad.length > 0) {
    errors.push({
      field: `${field}.text`,
      message: `named variables are lowercase letters, digits and underscores (found ${bad.map((n) => `{{${n}}}`).join(', ')})`,
    });
    return errors;
  }
  const given = component.example?.[`${key}_named_params`];
  const givenNames = Array.isArray(given)
    ? (given as Array<{ param_name?: unknown }>).map((entry) => entry?.param_name)
    : [];
  const missing = names.filter((name) => !givenNames.includes(name));
  if (missing.length > 0) {
    errors.push({
      field: `${field}.example.${key}_named_params`,
      message: `must give an example for ${missing.map((n) => `{{${n}}}`).join(', ')} as {param_name, example}`,
    });
  }
  return errors;
}

/** The request as the platform's POST /{WABA-ID}/message_templates takes it. */
export function platformDraft(draft: CreateTemplateDto): PlatformTemplateDraft {
  return {
    name: draft.name,
    language: draft.language,
    category: draft.category,
    ...(draft.parameter_format ? { parameter_format: draft.parameter_format.toUpperCase() } : {}),
    components: draft.components.map((component) => {
      const out: PlatformTemplateDraft['components'][number] = { type: component.type };
      if (component.format) out.format = component.format;
      if (component.text !== undefined) out.text = component.text;
      if (component.example) out.example = component.example;
      if (component.buttons) {
        out.buttons = component.buttons.map((button) =>
          Object.fromEntries(Object.entries(button).filter(([, value]) => value !== undefined)),
        );
      }
      return out;
    }),
  };
}
