import {
  checkSendComponents,
  componentsFor,
  parameterFormatOf,
  placeholders,
  renderTemplate,
  templateSlots,
} from './template-params.js';

const shipping = [
  { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}' },
  { type: 'BODY', text: 'Hi {{1}}, it arrives in {{2}} ({{1}}).' },
  { type: 'FOOTER', text: 'Acme' },
  {
    type: 'BUTTONS',
    buttons: [
      { type: 'QUICK_REPLY', text: 'Thanks' },
      { type: 'URL', text: 'Track', url: 'https://shop.example.com/o/{{1}}' },
    ],
  },
];

describe('template variables', () => {
  it('lists each variable once, positional ones by number', () => {
    expect(placeholders('{{2}} and {{1}} and {{2}}')).toEqual(['1', '2']);
    expect(placeholders('{{ name }} {{code}} {{name}}')).toEqual(['name', 'code']);
    expect(placeholders(undefined)).toEqual([]);
  });

  it('takes the declared format, else the one the variables show', () => {
    expect(parameterFormatOf('NAMED', [])).toBe('named');
    expect(parameterFormatOf(undefined, [{ type: 'BODY', text: 'Hi {{first_name}}' }])).toBe(
      'named',
    );
    expect(parameterFormatOf(null, shipping)).toBe('positional');
  });

  it('finds every place a send fills: header, body, a URL button with a variable, a media header', () => {
    expect(templateSlots(shipping)).toEqual([
      { component: 'header', kind: 'text', names: ['1'] },
      { component: 'body', kind: 'text', names: ['1', '2'] },
      { component: 'button', index: 1, kind: 'text', names: ['1'] },
    ]);
    expect(
      templateSlots([
        { type: 'HEADER', format: 'IMAGE' },
        { type: 'BODY', text: 'x' },
      ]),
    ).toEqual([{ component: 'header', kind: 'image', names: [] }]);
  });
});

describe('checkSendComponents', () => {
  const slots = templateSlots(shipping);
  const text = (value: string) => ({ type: 'text', text: value });

  it('accepts a send that fills every place, and a quick reply payload beside them', () => {
    expect(
      checkSendComponents(slots, 'positional', [
        { type: 'header', parameters: [text('#9')] },
        { type: 'body', parameters: [text('Ana'), text('2 days')] },
        { type: 'button', sub_type: 'url', index: '1', parameters: [text('9')] },
        {
          type: 'button',
          sub_type: 'quick_reply',
          index: '0',
          parameters: [{ type: 'payload', payload: 'x' }],
        },
      ]),
    ).toEqual([]);
  });

  it('names a media header given the wrong type', () => {
    const image = templateSlots([{ type: 'HEADER', format: 'IMAGE' }]);
    expect(
      checkSendComponents(image, 'positional', [
        { type: 'header', parameters: [{ type: 'video', video: { id: '1' } }] },
      ]),
    ).toEqual([
      { field: 'components[0].parameters', message: 'the header takes one image parameter' },
    ]);
  });

  it('names a parameter for a component without variables', () => {
    expect(
      checkSendComponents([], 'positional', [{ type: 'body', parameters: [text('extra')] }]),
    ).toEqual([{ field: 'components[0]', message: "the template's body takes no parameters" }]);
  });
});

describe('renderTemplate', () => {
  it('puts the parameters in, leaves a variable without one as it is', () => {
    expect(
      renderTemplate(shipping, 'positional', [
        { type: 'body', parameters: [{ type: 'text', text: 'Ana' }] },
        { type: 'button', index: '1', parameters: [{ type: 'text', text: '9' }] },
      ]),
    ).toEqual({
      header: 'Order {{1}}',
      header_media: null,
      body: 'Hi Ana, it arrives in {{2}} (Ana).',
      footer: 'Acme',
      buttons: [
        { type: 'quick_reply', text: 'Thanks' },
        { type: 'url', text: 'Track', url: 'https://shop.example.com/o/9' },
      ],
    });
  });

  it('fills named variables by name and shows currency by its fallback', () => {
    expect(
      renderTemplate([{ type: 'BODY', text: '{{name}} pays {{amount}}' }], 'named', [
        {
          type: 'body',
          parameters: [
            { type: 'currency', parameter_name: 'amount', currency: { fallback_value: 'R$ 5' } },
            { type: 'text', parameter_name: 'name', text: 'Ana' },
          ],
        },
      ]).body,
    ).toBe('Ana pays R$ 5');
  });
});

describe('componentsFor', () => {
  const offer = [
    { type: 'BODY', text: 'Oi {{1}}' },
    {
      type: 'BUTTONS',
      buttons: [
        { type: 'OTP', otp_type: 'COPY_CODE', text: 'Copy' },
        { type: 'COPY_CODE', example: 'OUTONO25' },
      ],
    },
  ];

  it("fills a code button as a URL button's text and a copy-code button with its coupon", () => {
    const slots = templateSlots(offer);
    const components = componentsFor(slots, 'positional', [], {
      '1': 'Ana',
      'button.0': '482913',
      'button.1': 'OUTONO25',
    });
    expect(components).toEqual([
      { type: 'body', parameters: [{ type: 'text', text: 'Ana' }] },
      {
        type: 'button',
        sub_type: 'url',
        index: '0',
        parameters: [{ type: 'text', text: '482913' }],
      },
      {
        type: 'button',
        sub_type: 'copy_code',
        index: '1',
        parameters: [{ type: 'coupon_code', coupon_code: 'OUTONO25' }],
      },
    ]);
    expect(checkSendComponents(slots, 'positional', components)).toEqual([]);
    expect(
      checkSendComponents(
        slots,
        'positional',
        componentsFor(slots, 'positional', [], { '1': 'A' }),
      ),
    ).toEqual([
      {
        field: 'components',
        message: `the template's button 0 takes 1 parameter ({{1}}): add a button component with index "0"`,
      },
      {
        field: 'components',
        message: `the template's button 1 takes a coupon_code parameter: add a button component with index "1"`,
      },
    ]);
  });
});
