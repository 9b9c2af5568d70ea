import { readdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { simulateMessage, type WebhookTarget } from './support/fake-platform.js';
import {
  APP_SECRET,
  adminToken,
  createCatalogueInstance,
  http,
  useTestService,
  waitFor,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352270002';
const ACCOUNT = '102290129370002';

interface Campaign {
  id: string;
  state: string;
  recipients: number;
  duplicates: number;
  invalid: number;
  progress: { queued: number; sent: number; skipped: number };
}

interface ErrorBody {
  code: string;
  message: string;
  details?: Array<{ field: string; message: string }>;
}

const number = (n: number) => `55119${String(n).padStart(8, '0')}`;

describe('campaigns from a CSV', () => {
  const context = useTestService({ env: { PLATFORM_SEND_RATE: '1000' } });
  let key: string;
  const target = (): WebhookTarget => ({
    url: `${context.service.url}/webhooks/messenger`,
    appSecret: APP_SECRET,
    phoneNumberId: PHONE_NUMBER_ID,
    channelAccountId: ACCOUNT,
  });
  const api = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
    http<T>(context.service.url, method, path, { token: key, body });

  /** POSTs the form as a browser would: the campaign's JSON, then the file. */
  const upload = async <T = Campaign>(
    campaign: unknown,
    csv: string | Uint8Array,
    campaignType?: string,
  ) => {
    const text = typeof campaign === 'string' ? campaign : JSON.stringify(campaign);
    let body: FormData | Buffer;
    let type: Record<string, string> = {};
    if (campaignType) {
      // A field part with its own content type (no file name), as the OpenAPI's encoding says.
      const boundary = 'typedBOUNDARY';
      body = Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="campaign"\r\n` +
            `Content-Type: ${campaignType}\r\n\r\n${text}\r\n` +
            `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="l.csv"\r\n` +
            'Content-Type: text/csv\r\n\r\n',
        ),
        Buffer.from(csv),
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      type = { 'content-type': `multipart/form-data; boundary=${boundary}` };
    } else {
      body = new FormData();
      if (campaign !== undefined) body.append('campaign', text);
      body.append('file', new Blob([csv], { type: 'text/csv' }), 'list.csv');
    }
    const response = await fetch(`${context.service.url}/campaigns/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, ...type },
      body,
    });
    return { status: response.status, body: (await response.json()) as T };
  };
  const campaignCount = async () =>
    (await api<{ data: unknown[] }>('GET', '/campaigns?limit=100')).body.data.length;
  const sendsTo = () => {
    const sends = new Map<string, Array<Record<string, unknown>>>();
    for (const body of context.platform.sentMessages()) {
      const to = String(body.to ?? body.recipient);
      sends.set(to, [...(sends.get(to) ?? []), body]);
    }
    return sends;
  };

  const shipping = {
    name: 'From a sheet',
    template_name: 'shipping_update',
    language: 'pt_BR',
    columns: {
      to: 'telefone',
      recipient: 'usuario',
      parameters: { '1': 'nome', '2': 'prazo', 'header.1': 'pedido', 'button.0': 'pedido' },
    },
  };

  beforeAll(async () => {
    const admin = await adminToken(context.service.url);
    ({ key } = await createCatalogueInstance(
      context.service.url,
      admin,
      PHONE_NUMBER_ID,
      'CSV',
      ACCOUNT,
    ));
  });

  beforeEach(() => context.platform.reset());

  it('reads a spreadsheet export (BOM, semicolons, quotes) and sends each row once with its cells', async () => {
    // An opted-out contact is skipped when sent, as from a JSON list.
    expect((await simulateMessage(target(), { waId: number(7) }, 'PARAR')).status).toBe(200);
    const csv =
      '\uFEFFtelefone;usuario;nome;prazo;pedido\r\n' +
      `+55 11 9${'0000001'.padStart(8, '0')};;"Silva; Maria";2 dias;#1\r\n` +
      `${number(2)};;"José ""Zé""";amanhã;#2\r\n` +
      `${number(2)};;Outra vez;hoje;#2b\r\n` +
      `12;;Curto demais;hoje;#3\r\n` +
      `;BR.ABCDEF123456;Sem número;hoje;#4\r\n` +
      `${number(7)};;Saiu;hoje;#7\r\n` +
      '\r\n';
    const created = await upload({ ...shipping, start: true }, csv);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ recipients: 4, duplicates: 1, invalid: 1 });
    await waitFor(async () => {
      const campaign = (await api<Campaign>('GET', `/campaigns/${created.body.id}`)).body;
      return campaign.state === 'completed';
    }, 30_000);
    const campaign = (await api<Campaign>('GET', `/campaigns/${created.body.id}`)).body;
    expect(campaign.progress).toMatchObject({ sent: 3, skipped: 1, queued: 0 });

    const sends = sendsTo();
    expect([...sends.keys()].sort()).toEqual(
      ['5511900000001', number(2), 'BR.ABCDEF123456'].sort(),
    );
    for (const list of sends.values()) expect(list).toHaveLength(1);
    const first = sends.get('5511900000001')![0] as {
      template: { components: Array<{ type: string; parameters: Array<{ text?: string }> }> };
    };
    const body = first.template.components.find((part) => part.type === 'body')!;
    expect(body.parameters.map((parameter) => parameter.text)).toEqual(['Silva; Maria', '2 dias']);
    const second = sends.get(number(2))![0] as typeof first;
    expect(
      second.template.components
        .find((part) => part.type === 'body')!
        .parameters.map((parameter) => parameter.text),
    ).toEqual(['José "Zé"', 'amanhã']);
  });

  it('takes 20,000 rows in one upload, comma-separated, and counts what it left out', async () => {
    const lines = ['phone,name,when,order'];
    for (let n = 0; n < 20_000; n++) lines.push(`${number(100_000 + n)},Cliente ${n},2 dias,${n}`);
    lines.push(`${number(100_000)},Repetido,2 dias,0`);
    const created = await upload(
      {
        ...shipping,
        name: 'Twenty thousand',
        columns: {
          to: 'phone',
          parameters: { '1': 'name', '2': 'when', 'header.1': 'order', 'button.0': 'order' },
        },
      },
      lines.join('\n'),
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      state: 'draft',
      recipients: 20_000,
      duplicates: 1,
      invalid: 0,
      progress: { queued: 20_000 },
    });
    const page = await api<{ data: Array<{ to: string; parameters: Record<string, string> }> }>(
      'GET',
      `/campaigns/${created.body.id}/recipients?limit=2`,
    );
    expect(page.body.data.map((recipient) => recipient.to)).toEqual([
      number(100_000),
      number(100_001),
    ]);
    expect(page.body.data[1].parameters).toEqual({
      '1': 'Cliente 1',
      '2': '2 dias',
      'header.1': '1',
      'button.0': '1',
    });
  });

  it('refuses the whole file, naming the line, when a row does not fit the template, and keeps nothing', async () => {
    const before = await campaignCount();
    const csv =
      'telefone,usuario,nome,prazo,pedido\n' +
      `${number(1)},,Maria,2 dias,#1\n` +
      `${number(2)},,,2 dias,#2\n`;
    const refused = await upload<ErrorBody>(shipping, csv);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('validation_failed');
    expect(refused.body.details).toEqual([
      { field: 'file', message: expect.stringMatching(/^line 3: /) },
    ]);
    expect(await campaignCount()).toBe(before);
  });

  it('names a mapped column the file lacks, and every bad field of the campaign', async () => {
    const missing = await upload<ErrorBody>(
      { ...shipping, columns: { ...shipping.columns, to: 'phone' } },
      'telefone,usuario,nome,prazo,pedido\n5511900000001,,a,b,c\n',
    );
    expect(missing.status).toBe(400);
    expect(missing.body.details).toEqual([
      {
        field: 'campaign.columns.to',
        message:
          'names phone, which is not a column of the file (its header: telefone, usuario, nome, prazo, pedido)',
      },
    ]);
    const bad = await upload<ErrorBody>(
      { name: '', template_name: 'shipping_update', extra: 1 },
      'a\n',
    );
    expect(bad.status).toBe(400);
    expect(bad.body.details!.map((detail) => detail.field).sort()).toEqual(
      ['campaign.columns', 'campaign.extra', 'campaign.name'].sort(),
    );
    const noColumn = await upload<ErrorBody>({ ...shipping, columns: {} }, 'a\n');
    expect(noColumn.body.details).toEqual([
      { field: 'campaign.columns', message: 'must name the column of to or of recipient' },
    ]);
    const notJson = await upload<ErrorBody>('{name', 'a\n');
    expect(notJson.body.details).toEqual([{ field: 'campaign', message: 'must be a JSON object' }]);
    const noCampaign = await upload<ErrorBody>(undefined, 'a\n');
    expect(noCampaign.status).toBe(400);
    expect(noCampaign.body.details).toEqual([
      { field: 'campaign', message: 'is required: a JSON object, before the file' },
    ]);
    const json = await api<ErrorBody>('POST', '/campaigns/upload', shipping);
    expect(json.status).toBe(415);
    expect(json.body.code).toBe('unsupported_media_type');
  });

  it('refuses a file with no valid recipient, and an unknown template', async () => {
    const none = await upload<ErrorBody>(
      shipping,
      'telefone,usuario,nome,prazo,pedido\n12,,a,b,c\n',
    );
    expect(none.status).toBe(400);
    expect(none.body.details).toEqual([
      { field: 'file', message: 'holds no valid recipient (numbers are 8 to 15 digits)' },
    ]);
    const unknown = await upload<ErrorBody>(
      { ...shipping, template_name: 'no_such_template' },
      'telefone\n5511900000001\n',
    );
    expect(unknown.status).toBe(422);
    expect(unknown.body.code).toBe('template_not_found');
  });

  it('takes the campaign part as application/json too, as the OpenAPI document describes it', async () => {
    const created = await upload(
      { ...shipping, name: 'Typed part' },
      `telefone,usuario,nome,prazo,pedido\n${number(300)},,Ana,2 dias,#1\n`,
      'application/json',
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ recipients: 1 });
    const broken = await upload<ErrorBody>('{name', 'a\n', 'application/json');
    expect(broken.status).toBe(400);
    // The form parser drops a JSON part it cannot read: the field is missing.
    expect(broken.body.details).toEqual([
      { field: 'campaign', message: 'is required: a JSON object, before the file' },
    ]);
  });

  it('refuses a file that is not UTF-8, and names where a quote was left open', async () => {
    const latin1 = Buffer.from(
      `telefone,usuario,nome,prazo,pedido\n${number(301)},,José,2 dias,#1\n`,
      'latin1',
    );
    const refused = await upload<ErrorBody>(shipping, latin1);
    expect(refused.status).toBe(400);
    expect(refused.body.details).toEqual([
      { field: 'file', message: 'is not UTF-8 text (save it as "CSV UTF-8")' },
    ]);
    const open = await upload<ErrorBody>(
      shipping,
      `telefone,usuario,nome,prazo,pedido\n${number(302)},,Ana,2 dias,#1\n${number(303)},,"Bia,2 dias,#2\n${number(304)},,Caio,2 dias,#3\n`,
    );
    expect(open.status).toBe(400);
    expect(open.body.details).toEqual([
      { field: 'file', message: expect.stringMatching(/^after line 2: /) },
    ]);
  });

  it('answers a large file refused for its template, and lives through an upload cut off halfway', async () => {
    const before = await campaignCount();
    const big = `telefone\n${`${number(5)}\n`.repeat(400_000)}`;
    const refused = await upload<ErrorBody>(
      { ...shipping, template_name: 'no_such_template' },
      big,
    );
    expect(refused.status).toBe(422);

    // A client that goes away in the middle of its file.
    const boundary = 'cutBOUNDARY';
    await new Promise<void>((resolve) => {
      const req = httpRequest(`${context.service.url}/campaigns/upload`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'transfer-encoding': 'chunked',
        },
      });
      req.on('error', () => resolve());
      req.on('response', () => resolve());
      req.write(
        `--${boundary}\r\nContent-Disposition: form-data; name="campaign"\r\n\r\n${JSON.stringify(shipping)}\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="l.csv"\r\nContent-Type: text/csv\r\n\r\n` +
          `telefone,usuario,nome,prazo,pedido\n${`${number(6)},,Ana,2 dias,#1\n`.repeat(2000)}`,
      );
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 200);
    });
    // Still up, nothing kept of it, and the next upload goes through.
    await waitFor(async () => (await api('GET', '/campaigns?limit=1')).status === 200, 10_000);
    const next = await upload(
      { ...shipping, name: 'After the cut' },
      `telefone,usuario,nome,prazo,pedido\n${number(7)},,Ana,2 dias,#1\n`,
    );
    expect(next.status).toBe(201);
    expect(await campaignCount()).toBe(before + 1);
    await waitFor(
      () => !readdirSync(tmpdir()).some((name) => name.startsWith('mc-campaign-')),
      10_000,
    );
  });
});
