import { getMetadataStorage, type ValidationArguments } from 'class-validator';
import {
  adminToken,
  createApiKey,
  createInstance,
  http,
  useTestService,
} from './support/test-app.js';

/**
 * Every validation message speaks in the project's voice: it follows the field
 * (named in details[].field) with "must …", "is …", and never is one of
 * class-validator's defaults ("body must be longer than or equal to 1
 * characters", "name should not be empty"), which repeat the field and read
 * differently.
 */
const DEFAULT_PHRASES = [
  /longer than or equal to/,
  /shorter than or equal to/,
  /should not be (empty|null or undefined)/,
  /nested property/,
  /either object or array/,
  /an unknown value was passed/,
  /each value in/,
  /must contain (at least|no more than|not more than) \d+ elements/,
  /must be one of the following values/,
  /must not be (less|greater) than/,
  /\$property/,
];
const PROJECT_VOICE = /^(must|is|give|contains|names|cannot) /;

interface FieldError {
  field: string;
  message: string;
}

function expectProjectVoice(where: string, details: FieldError[]): void {
  for (const { field, message } of details) {
    const last = field.split('.').pop()!;
    const problems = [
      ...DEFAULT_PHRASES.filter((phrase) => phrase.test(message)).map(String),
      ...(PROJECT_VOICE.test(message) ? [] : ['not in the project voice']),
      ...(message.startsWith(`${last} `) ? ['repeats the field'] : []),
    ];
    expect({ where, field, message, problems }).toEqual({ where, field, message, problems: [] });
  }
}

const long = (length: number): string => 'x'.repeat(length);

describe('validation messages', () => {
  const context = useTestService();
  let token: string;
  let key: string;
  let instanceId: string;

  beforeAll(async () => {
    token = await adminToken(context.service.url);
    instanceId = await createInstance(context.service.url, token, '106540352299991', 'Voice');
    key = await createApiKey(context.service.url, token, instanceId, 'voice');
  });

  /** [what, method, path, auth, body, messages it must include (field → message)] */
  type Case = [string, string, string, 'admin' | 'key', unknown, Record<string, string>?];
  const cases = (): Case[] => [
    [
      'login',
      'POST',
      '/admin/auth/login',
      'admin',
      { username: 5, password: '' },
      // The last rule a field states is checked first: a number is "not 1 to 200 characters".
      { username: 'must be 1 to 200 characters', password: 'must be 1 to 1000 characters' },
    ],
    [
      'create instance',
      'POST',
      '/admin/instances',
      'admin',
      {
        name: '',
        phone_number_id: 'a/b',
        channel_account_id: 7,
        access_token: '',
        token_type: 'x',
      },
      {
        name: 'must be 1 to 200 characters',
        phone_number_id: 'must be 1 to 64 letters, digits, dashes or underscores',
        access_token: 'must be 1 to 4096 characters',
        token_type: 'must be one of system_user, oauth',
      },
    ],
    [
      'update instance',
      'PATCH',
      `/admin/instances/${instanceId}`,
      'admin',
      { name: long(201), token_type: 5, business_id: 5, phone_number_id: '1' },
      {
        name: 'must be 1 to 200 characters',
        token_type: 'must be one of system_user, oauth',
        phone_number_id: 'cannot be changed; create a new instance for another number',
      },
    ],
    [
      'API key',
      'POST',
      '/admin/api-keys',
      'admin',
      { name: '', instance_id: 'nope' },
      { name: 'must be 1 to 200 characters', instance_id: 'must be a UUID' },
    ],
    [
      'register',
      'POST',
      '/instance/register',
      'key',
      { pin: 123456 },
      { pin: 'must be exactly 6 digits' },
    ],
    [
      'request code',
      'POST',
      '/instance/request_code',
      'key',
      { code_method: 'FAX', language: 5 },
      {
        code_method: 'must be one of SMS, VOICE',
        language: 'must be a locale such as en or pt_BR',
      },
    ],
    [
      'verify code',
      'POST',
      '/instance/verify_code',
      'key',
      { code: long(33) },
      { code: 'must be 1 to 32 characters' },
    ],
    [
      'text',
      'POST',
      '/send/text',
      'key',
      { to: '5511999990000', body: '', reply_to: 5 },
      { body: 'must be 1 to 4096 characters', reply_to: 'must be 1 to 256 characters' },
    ],
    [
      'text too long',
      'POST',
      '/send/text',
      'key',
      { to: '5511999990000', body: long(4097) },
      { body: 'must be 1 to 4096 characters' },
    ],
    [
      'image without media',
      'POST',
      '/send/image',
      'key',
      { to: '5511999990000' },
      { media: 'is required' },
    ],
    [
      'image, media not an object',
      'POST',
      '/send/image',
      'key',
      { to: '5511999990000', media: 'x', caption: long(1025) },
      { media: 'must be an object', caption: 'must be at most 1024 characters' },
    ],
    [
      'image, bad media',
      'POST',
      '/send/image',
      'key',
      { to: '5511999990000', media: { id: '' }, filename: '' },
      { 'media.id': 'must be 1 to 256 characters', filename: 'must be 1 to 240 characters' },
    ],
    [
      'document',
      'POST',
      '/send/document',
      'key',
      { to: '5511999990000', media: { link: 'ftp://x' }, filename: 5 },
      {
        'media.link': 'must be an http or https URL',
        filename: 'must be a file name with an extension',
      },
    ],
    [
      'location',
      'POST',
      '/send/location',
      'key',
      { to: '5511999990000', latitude: 91, longitude: 'east', name: '' },
      {
        latitude: 'must be a number from -90 to 90',
        longitude: 'must be a number from -180 to 180',
        name: 'must be 1 to 1000 characters',
      },
    ],
    [
      'contacts, none',
      'POST',
      '/send/contacts',
      'key',
      { to: '5511999990000', contacts: [] },
      { contacts: 'must hold 1 to 20 contacts' },
    ],
    [
      'contacts, not objects',
      'POST',
      '/send/contacts',
      'key',
      { to: '5511999990000', contacts: ['x'] },
      { 'contacts.0': 'must be an object' },
    ],
    [
      'contacts, bad card',
      'POST',
      '/send/contacts',
      'key',
      {
        to: '5511999990000',
        contacts: [
          {
            name: { formatted_name: '' },
            phones: Array.from({ length: 21 }, () => ({ phone: '1' })),
            emails: [{ email: 'nope' }],
          },
        ],
      },
      {
        'contacts.0.name.formatted_name': 'must be 1 to 256 characters',
        'contacts.0.phones': 'must hold at most 20 phones',
        'contacts.0.emails.0.email': 'must be an email address',
      },
    ],
    [
      'contacts, no name',
      'POST',
      '/send/contacts',
      'key',
      { to: '5511999990000', contacts: [{ phones: 'x' }] },
      { 'contacts.0.name': 'is required', 'contacts.0.phones': 'must hold at most 20 phones' },
    ],
    [
      'reaction',
      'POST',
      '/send/reaction',
      'key',
      { to: '5511999990000', message_id: '', emoji: long(33) },
      { message_id: 'must be 1 to 256 characters', emoji: 'must be at most 32 characters' },
    ],
    [
      'template',
      'POST',
      '/send/template',
      'key',
      {
        to: '5511999990000',
        template_name: '',
        components: [{ type: 'x', index: 'a', parameters: [{ type: 'bad', text: 5 }] }],
      },
      { template_name: 'must be 1 to 512 characters' },
    ],
    [
      'template, too many components',
      'POST',
      '/send/template',
      'key',
      { to: '5511999990000', template_name: 't', components: Array(21).fill({ type: 'body' }) },
      { components: 'must hold at most 20 components' },
    ],
    [
      'template, bad parameter',
      'POST',
      '/send/template',
      'key',
      {
        to: '5511999990000',
        template_name: 't',
        components: [{ type: 'body', parameters: [{ type: 'text', currency: 'x', text: 5 }] }],
      },
      {
        'components.0.parameters.0.text': 'must be at most 32768 characters',
        'components.0.parameters.0.currency': 'must be an object',
      },
    ],
    [
      'interactive, bad type and header',
      'POST',
      '/send/interactive',
      'key',
      { to: '5511999990000', type: 'x', body: '', header: 'x', footer: long(61) },
      {
        type: 'must be one of buttons, list, cta_url',
        body: 'must be 1 to 1024 characters',
        header: 'must be an object',
        footer: 'must be 1 to 60 characters',
      },
    ],
    [
      'interactive, buttons',
      'POST',
      '/send/interactive',
      'key',
      {
        to: '5511999990000',
        type: 'buttons',
        body: 'b',
        header: { type: 'image', text: '' },
        buttons: Array.from({ length: 4 }, (_, i) => ({
          type: 'reply',
          reply: { id: `b${i}`, title: 'A' },
        })),
      },
      {
        buttons: 'must hold 1 to 3 reply buttons',
        'header.type': 'must be text',
        'header.text': 'must be 1 to 60 characters',
      },
    ],
    [
      'interactive, button items',
      'POST',
      '/send/interactive',
      'key',
      {
        to: '5511999990000',
        type: 'buttons',
        body: 'b',
        buttons: ['x', { type: 'reply', reply: { id: '', title: long(21) } }],
      },
      {
        'buttons.0': 'must be an object',
        'buttons.1.reply.id': 'must be 1 to 256 characters',
        'buttons.1.reply.title': 'must be 1 to 20 characters',
      },
    ],
    [
      'interactive, repeated reply ids',
      'POST',
      '/send/interactive',
      'key',
      {
        to: '5511999990000',
        type: 'buttons',
        body: 'b',
        buttons: Array(2).fill({ type: 'reply', reply: { id: 'a', title: 'A' } }),
      },
      { buttons: 'must not repeat a reply id' },
    ],
    [
      'interactive, list',
      'POST',
      '/send/interactive',
      'key',
      {
        to: '5511999990000',
        type: 'list',
        body: 'b',
        button_text: '',
        sections: [
          { title: '', rows: [] },
          { rows: [{ id: '', title: long(25), description: long(73) }] },
        ],
      },
      {
        button_text: 'must be 1 to 20 characters',
        'sections.0.title': 'must be 1 to 24 characters',
        'sections.0.rows': 'must hold at least 1 row',
        'sections.1.rows.0.id': 'must be 1 to 200 characters',
        'sections.1.rows.0.title': 'must be 1 to 24 characters',
        'sections.1.rows.0.description': 'must be at most 72 characters',
      },
    ],
    [
      'interactive, no sections',
      'POST',
      '/send/interactive',
      'key',
      { to: '5511999990000', type: 'list', body: 'b', sections: [] },
      { sections: 'must hold 1 to 10 rows in all' },
    ],
    [
      'interactive, cta_url',
      'POST',
      '/send/interactive',
      'key',
      { to: '5511999990000', type: 'cta_url', body: 'b', display_text: 5, url: 'x' },
      { display_text: 'must be 1 to 20 characters', url: 'must be an http or https URL' },
    ],
    [
      'turns query',
      'GET',
      '/admin/turns?limit=0&status=x&contact=%2B1',
      'admin',
      undefined,
      { limit: 'must be an integer from 1 to 100' },
    ],
    [
      'cursor',
      'GET',
      '/admin/turns?cursor=a&cursor=b',
      'admin',
      undefined,
      { cursor: 'must be a cursor from next_cursor' },
    ],
  ];

  it('answers every kind of rule in the project voice, never with a class-validator default', async () => {
    for (const [what, method, path, auth, body, expected] of cases()) {
      const answer = await http<{ code: string; details: FieldError[] }>(
        context.service.url,
        method,
        path,
        { token: auth === 'admin' ? token : key, body },
      );
      expect({ what, status: answer.status, code: answer.body.code }).toEqual({
        what,
        status: 400,
        code: 'validation_failed',
      });
      expectProjectVoice(what, answer.body.details);
      const messages = Object.fromEntries(answer.body.details.map((d) => [d.field, d.message]));
      expect({ what, messages }).toEqual({
        what,
        messages: expect.objectContaining(expected ?? {}) as Record<string, string>,
      });
    }
    expect(context.platform.sentMessages()).toHaveLength(0);
  });

  it('gives every DTO rule a message of its own (no rule falls back to a default)', () => {
    // All DTOs are loaded once the app runs; their rules are in class-validator's storage.
    const storage = getMetadataStorage() as unknown as {
      validationMetadatas: Map<
        { name: string },
        Array<{
          type: string;
          propertyName: string;
          message?: unknown;
          constraints?: unknown[];
          constraintCls?: new () => unknown;
        }>
      >;
      getTargetValidatorConstraints(target: unknown): Array<{ target: new () => unknown }>;
    };
    expect(storage.validationMetadatas).toBeInstanceOf(Map);
    const withDefaults: string[] = [];
    let checked = 0;
    for (const [target, rules] of storage.validationMetadatas) {
      if (!target.name.endsWith('Dto')) continue; // the configuration class speaks for itself
      for (const rule of rules) {
        const args: ValidationArguments = {
          property: rule.propertyName,
          constraints: rule.constraints ?? [],
          targetName: target.name,
          value: undefined,
          object: {},
        };
        // What a failure of the rule says: its own message (some decorators fill in a
        // default there, as ValidateNested does), else its validator's default.
        let message: string | undefined;
        if (typeof rule.message === 'string') message = rule.message;
        else if (typeof rule.message === 'function')
          message = (rule.message as (args: ValidationArguments) => string)(args);
        else if (rule.constraintCls) {
          const [constraint] = storage.getTargetValidatorConstraints(rule.constraintCls);
          const validator = new constraint.target() as {
            defaultMessage?: (args: ValidationArguments) => string;
          };
          message = validator.defaultMessage?.(args);
        }
        if (message === undefined) continue; // a condition (IsOptional, ValidateIf): says nothing
        checked++;
        if (DEFAULT_PHRASES.some((phrase) => phrase.test(message)) || !PROJECT_VOICE.test(message))
          withDefaults.push(`${target.name}.${rule.propertyName}: ${message}`);
      }
    }
    expect(checked).toBeGreaterThan(0);
    expect(withDefaults).toEqual([]);
  });
});
