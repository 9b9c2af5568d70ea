import { DECORATORS } from '@nestjs/swagger';
import { getMetadataStorage } from 'class-validator';
import { INTERACTIVE_FORMS } from './interactive-forms.dto.js';
import { INTERACTIVE_TYPES, SendInteractiveDto } from './send-interactive.dto.js';

interface PropertyDoc {
  enum?: unknown[];
  required?: boolean;
}

/** The properties a class documents, with their OpenAPI metadata. */
function documented(form: new () => object): Map<string, PropertyDoc> {
  const keys = (Reflect.getMetadata(DECORATORS.API_MODEL_PROPERTIES_ARRAY, form.prototype) ??
    []) as string[];
  return new Map(
    keys.map((key) => {
      const name = key.replace(/^:/, '');
      const doc = Reflect.getMetadata(DECORATORS.API_MODEL_PROPERTIES, form.prototype, name) as
        PropertyDoc | undefined;
      return [name, doc ?? {}];
    }),
  );
}

describe('the documented forms of POST /send/interactive', () => {
  it('are one per type, each fixing its type', () => {
    expect(Object.keys(INTERACTIVE_FORMS).sort()).toEqual([...INTERACTIVE_TYPES].sort());
    for (const [type, form] of Object.entries(INTERACTIVE_FORMS)) {
      const doc = documented(form).get('type');
      expect(doc?.enum).toEqual([type]);
      expect(doc?.required).not.toBe(false);
    }
  });

  it('together describe exactly the fields SendInteractiveDto validates', () => {
    const validated = new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(SendInteractiveDto, '', true, false)
        .map((rule) => rule.propertyName),
    );
    const described = new Set(
      Object.values(INTERACTIVE_FORMS).flatMap((form) => [...documented(form).keys()]),
    );
    expect([...described].sort()).toEqual([...validated].sort());
  });

  it("require each type's own required fields", () => {
    const required = (form: new () => object): string[] =>
      [...documented(form)]
        .filter(([, doc]) => doc.required !== false)
        .map(([name]) => name)
        .sort();
    expect(required(INTERACTIVE_FORMS.buttons)).toEqual(['body', 'buttons', 'type']);
    expect(required(INTERACTIVE_FORMS.list)).toEqual(['body', 'sections', 'type']);
    expect(required(INTERACTIVE_FORMS.cta_url)).toEqual(['body', 'type', 'url']);
  });
});
