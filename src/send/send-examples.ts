import type { SendKind } from './send-kinds.js';

const to = '5511999990000';

/** One worked request per /send type, shown in the API docs (and checked against validation). */
export const SEND_EXAMPLES: Record<SendKind, Record<string, unknown>> = {
  text: {
    to,
    body: 'Olá! Seu pedido foi confirmado.',
    reply_to: 'wamid.HBgLNTUxMTk5OTk5MDAwMBUCABIYFjNFQjA',
  },
  image: { to, media: { link: 'https://example.com/product.jpg' }, caption: 'Nosso novo produto' },
  document: {
    to,
    media: { id: '1013859600285441' },
    filename: 'nota-fiscal-2031.pdf',
    caption: 'Sua nota fiscal',
  },
  audio: { to, media: { id: '1013859600285442' } },
  video: { to, media: { link: 'https://example.com/tutorial.mp4' }, caption: 'Como usar' },
  sticker: { to, media: { id: '1013859600285443' } },
  location: {
    to,
    latitude: -23.5614,
    longitude: -46.6559,
    name: 'Loja Paulista',
    address: 'Av. Paulista, 1000 - São Paulo',
  },
  contacts: {
    to,
    contacts: [
      {
        name: { formatted_name: 'Maria Silva', first_name: 'Maria', last_name: 'Silva' },
        phones: [{ phone: '+55 11 98888-0000', type: 'CELL' }],
        emails: [{ email: 'maria@example.com', type: 'WORK' }],
      },
    ],
  },
  reaction: { to, message_id: 'wamid.HBgLNTUxMTk5OTk5MDAwMBUCABIYFjNFQjA', emoji: '👍' },
  template: {
    to,
    template_name: 'order_update',
    language: 'pt_BR',
    components: [{ type: 'body', parameters: [{ type: 'text', text: 'Maria' }] }],
  },
  interactive: {
    to,
    type: 'buttons',
    header: { type: 'text', text: 'Pedido 42' },
    body: 'Confirma a entrega para amanhã?',
    footer: 'Responda abaixo',
    buttons: [
      { type: 'reply', reply: { id: 'confirm', title: 'Confirmar' } },
      { type: 'reply', reply: { id: 'reschedule', title: 'Remarcar' } },
    ],
  },
};

/** Extra interactive examples: the list and call-to-action forms. */
export const INTERACTIVE_EXAMPLES: Record<string, Record<string, unknown>> = {
  buttons: SEND_EXAMPLES.interactive,
  list: {
    to,
    type: 'list',
    body: 'Escolha um sabor',
    button_text: 'Ver sabores',
    sections: [
      {
        title: 'Pizzas',
        rows: [
          { id: 'margherita', title: 'Margherita', description: 'Tomate, mussarela e manjericão' },
          { id: 'calabresa', title: 'Calabresa' },
        ],
      },
    ],
  },
  cta_url: {
    to,
    type: 'cta_url',
    body: 'Acompanhe seu pedido',
    display_text: 'Rastrear',
    url: 'https://example.com/pedidos/42',
  },
};
