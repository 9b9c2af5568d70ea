import { buildPlatformMessage } from './outbound-message.builder.js';
import type { SendKind, SendRequests } from './send-kinds.js';

const TO = '16505551234';

/** Builds from a plain request, as the validation pipe would hand it over. */
function build<K extends SendKind>(kind: K, request: Record<string, unknown>) {
  return buildPlatformMessage(kind, { to: TO, ...request } as unknown as SendRequests[K]);
}

/** The reference's example envelope (its product name replaced by ours). */
function reference(type: string, content: Record<string, unknown>) {
  return { messaging_product: 'messenger', recipient_type: 'individual', to: TO, type, ...content };
}

describe('outbound message builders (reference examples of POST /{phone}/messages)', () => {
  it('text, and reply_to as context ("Send Reply to Text Message")', () => {
    expect(build('text', { body: 'hello' })).toEqual(
      reference('text', { text: { body: 'hello' } }),
    );
    expect(build('text', { body: '<TEXT_MSG_CONTENT>', reply_to: '<MSGID_OF_PREV_MSG>' })).toEqual(
      reference('text', {
        context: { message_id: '<MSGID_OF_PREV_MSG>' },
        text: { body: '<TEXT_MSG_CONTENT>' },
      }),
    );
  });

  it('image by id and by URL ("Send Image Message by ID/URL")', () => {
    expect(build('image', { media: { id: '<IMAGE_OBJECT_ID>' } })).toEqual(
      reference('image', { image: { id: '<IMAGE_OBJECT_ID>' } }),
    );
    expect(build('image', { media: { link: 'https://image-url' }, caption: 'look' })).toEqual(
      reference('image', { image: { link: 'https://image-url', caption: 'look' } }),
    );
  });

  it('document with caption and filename ("Send Document Message by ID")', () => {
    expect(
      build('document', {
        media: { id: '<DOCUMENT_OBJECT_ID>' },
        caption: '<DOCUMENT_CAPTION_TO_SEND>',
        filename: '<DOCUMENT_FILENAME>',
      }),
    ).toEqual(
      reference('document', {
        document: {
          caption: '<DOCUMENT_CAPTION_TO_SEND>',
          filename: '<DOCUMENT_FILENAME>',
          id: '<DOCUMENT_OBJECT_ID>',
        },
      }),
    );
  });

  it('audio, video and sticker', () => {
    expect(build('audio', { media: { id: 'a1' } })).toEqual(
      reference('audio', { audio: { id: 'a1' } }),
    );
    expect(build('video', { media: { link: 'https://v.mp4' }, caption: 'c' })).toEqual(
      reference('video', { video: { link: 'https://v.mp4', caption: 'c' } }),
    );
    expect(build('sticker', { media: { id: 's1' } })).toEqual(
      reference('sticker', { sticker: { id: 's1' } }),
    );
  });

  it('location ("Send Location Message")', () => {
    expect(
      build('location', {
        latitude: 37.758056,
        longitude: -122.425332,
        name: 'META HQ',
        address: '1 Hacker Way, Menlo Park, CA 94025',
      }),
    ).toEqual(
      reference('location', {
        location: {
          address: '1 Hacker Way, Menlo Park, CA 94025',
          latitude: 37.758056,
          longitude: -122.425332,
          name: 'META HQ',
        },
      }),
    );
  });

  it('contacts ("Send Contact Message", the fields the spec takes)', () => {
    const card = {
      name: { first_name: 'John', formatted_name: 'John Smith', last_name: 'Smith' },
      phones: [
        { phone: '+1 (940) 555-1234', type: 'HOME' },
        { phone: '+1 (650) 555-1234', type: 'WORK' },
      ],
      emails: [{ email: 'test@fb.com', type: 'WORK' }],
    };
    expect(build('contacts', { contacts: [card] })).toEqual(
      reference('contacts', { contacts: [card] }),
    );
  });

  it('reaction, and an empty emoji that removes it ("Send Reply with Reaction Message")', () => {
    expect(build('reaction', { message_id: 'wamid.HBgLM...', emoji: '😀' })).toEqual(
      reference('reaction', { reaction: { emoji: '😀', message_id: 'wamid.HBgLM...' } }),
    );
    expect(build('reaction', { message_id: 'wamid.X', emoji: '' })).toEqual(
      reference('reaction', { reaction: { emoji: '', message_id: 'wamid.X' } }),
    );
  });

  it('template with components, language defaulting to pt_BR ("Send Message Template Text")', () => {
    const components = [{ type: 'body', parameters: [{ type: 'text', text: 'text-string' }] }];
    expect(
      build('template', { template_name: 'template-name', language: 'en_US', components }),
    ).toEqual(
      reference('template', {
        template: { name: 'template-name', language: { code: 'en_US' }, components },
      }),
    );
    expect(build('template', { template_name: 'hello' })).toEqual(
      reference('template', { template: { name: 'hello', language: { code: 'pt_BR' } } }),
    );
  });

  it('interactive buttons become type button ("Send Reply Button")', () => {
    const buttons = [
      { type: 'reply', reply: { id: '<UNIQUE_BUTTON_ID_1>', title: '<BUTTON_TITLE_1>' } },
      { type: 'reply', reply: { id: '<UNIQUE_BUTTON_ID_2>', title: '<BUTTON_TITLE_2>' } },
    ];
    expect(build('interactive', { type: 'buttons', body: '<BUTTON_TEXT>', buttons })).toEqual(
      reference('interactive', {
        interactive: { type: 'button', body: { text: '<BUTTON_TEXT>' }, action: { buttons } },
      }),
    );
  });

  it('interactive list with header and footer ("Send List Message"), button text defaulting to Menu', () => {
    const sections = [
      {
        title: '<LIST_SECTION_1_TITLE>',
        rows: [
          {
            id: '<LIST_SECTION_1_ROW_1_ID>',
            title: '<SECTION_1_ROW_1_TITLE>',
            description: '<SECTION_1_ROW_1_DESC>',
          },
        ],
      },
    ];
    expect(
      build('interactive', {
        type: 'list',
        header: { type: 'text', text: '<HEADER_TEXT>' },
        body: '<BODY_TEXT>',
        footer: '<FOOTER_TEXT>',
        button_text: '<BUTTON_TEXT>',
        sections,
      }),
    ).toEqual(
      reference('interactive', {
        interactive: {
          type: 'list',
          header: { type: 'text', text: '<HEADER_TEXT>' },
          body: { text: '<BODY_TEXT>' },
          footer: { text: '<FOOTER_TEXT>' },
          action: { button: '<BUTTON_TEXT>', sections },
        },
      }),
    );
    const defaulted = build('interactive', { type: 'list', body: 'b', sections });
    expect((defaulted.interactive as { action: { button: string } }).action.button).toBe('Menu');
  });

  it('interactive cta_url as the contract says, display text defaulting to Acessar', () => {
    expect(
      build('interactive', { type: 'cta_url', body: 'See it', url: 'https://x.io/1' }),
    ).toEqual(
      reference('interactive', {
        interactive: {
          type: 'cta_url',
          body: { text: 'See it' },
          action: {
            name: 'cta_url',
            parameters: { display_text: 'Acessar', url: 'https://x.io/1' },
          },
        },
      }),
    );
  });
});
