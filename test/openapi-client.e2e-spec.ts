import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { VALID_TOKEN } from './support/fake-platform.js';
import { ADMIN_PASSWORD, http, useTestService } from './support/test-app.js';

/*
 * A client generated from the served document, as a client's developer would
 * make one (openapi-typescript with its default options, openapi-fetch), must
 * type-check a program that uses the API, and that program, run against the
 * service, must get what its types say.
 */

const run = promisify(execFile);

/** Where the generated client lives: inside node_modules, so `openapi-fetch` resolves. */
const WORK_DIR = new URL(`../node_modules/.cache/openapi-client-${process.pid}/`, import.meta.url);

const PHONE_NUMBER_ID = '106540352242955';
const TO = '5511999990000';

/** The program a client's developer writes: admin setup, then sends, typed by the schema. */
const CLIENT_PROGRAM = `
import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';

type Schemas = components['schemas'];
type InteractiveBody =
  paths['/send/interactive']['post']['requestBody']['content']['application/json'];

const [baseUrl, password, phoneNumberId, accessToken, to] = process.argv.slice(2);

function must<T>(answer: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (answer.data === undefined) {
    throw new Error(what + ': ' + answer.response.status + ' ' + JSON.stringify(answer.error));
  }
  return answer.data;
}

const anonymous = createClient<paths>({ baseUrl });
const login = must(
  await anonymous.POST('/admin/auth/login', { body: { username: 'admin', password } }),
  'login',
);
const admin = createClient<paths>({ baseUrl, headers: { authorization: 'Bearer ' + login.token } });

const instance: Schemas['CreatedInstanceDto'] = must(
  await admin.POST('/admin/instances', {
    body: {
      name: 'Typed client',
      phone_number_id: phoneNumberId,
      channel_account_id: '102290129340398',
      access_token: accessToken,
      token_type: 'system_user',
    },
  }),
  'createInstance',
);
const updated = must(
  await admin.PATCH('/admin/instances/{id}', {
    params: { path: { id: instance.id } },
    body: { business_id: '506914307656634', platform_app_id: null },
  }),
  'updateInstance',
);
// @ts-expect-error business_id is a string or null, never an object
await admin.PATCH('/admin/instances/{id}', { params: { path: { id: instance.id } }, body: { business_id: {} } });

const issued = must(
  await admin.POST('/admin/api-keys', { body: { name: 'typed-client', instance_id: instance.id } }),
  'createApiKey',
);
const client = createClient<paths>({ baseUrl, headers: { authorization: 'Bearer ' + issued.key } });

const text = must(await client.POST('/send/text', { body: { to, body: 'Olá! Tudo certo?' } }), 'sendText');

const buttons: InteractiveBody = {
  to,
  type: 'buttons',
  body: 'Confirma a entrega?',
  buttons: [{ type: 'reply', reply: { id: 'yes', title: 'Sim' } }],
};
const list: Schemas['SendInteractiveListDto'] = {
  to,
  type: 'list',
  body: 'Escolha um sabor',
  sections: [{ title: 'Pizzas', rows: [{ id: 'margherita', title: 'Margherita' }] }],
};
// @ts-expect-error the buttons form has no url
const misplaced: InteractiveBody = { to, type: 'buttons', body: 'x', buttons: [], url: 'https://example.com' };
void misplaced;
const sentButtons = must(await client.POST('/send/interactive', { body: buttons }), 'sendInteractive');
const sentList = must(await client.POST('/send/interactive', { body: list }), 'sendInteractive');

const template = must(
  await client.POST('/send/template', {
    body: {
      to,
      template_name: 'order_update',
      components: [
        {
          type: 'body',
          parameters: [
            { type: 'currency', currency: { fallback_value: 'R$ 12,50', code: 'BRL', amount_1000: 12500 } },
            { type: 'date_time', date_time: { fallback_value: '23/11/2026' } },
          ],
        },
      ],
    },
  }),
  'sendTemplate',
);

const stored = must(
  await client.GET('/messages/{wamid}', { params: { path: { wamid: text.wamid } } }),
  'getMessage',
);

const refused = await client.POST('/send/text', { body: { to: '+55 11', body: '' } });
const failingFields: string[] = (refused.error?.details ?? []).flatMap((detail) =>
  'field' in detail ? [detail.field] : [],
);

const metrics = await anonymous.GET('/metrics', { parseAs: 'text' });
const metricsText: string | undefined = metrics.data;

console.log(
  JSON.stringify({
    status: instance.status,
    updated: updated.id === instance.id,
    key_prefix: issued.key.slice(0, 4),
    wamids: [text.wamid, sentButtons.wamid, sentList.wamid, template.wamid],
    stored: { wamid: stored.wamid, direction: stored.direction, contact: stored.contact },
    refused: { status: refused.response.status, code: refused.error?.code, fields: failingFields.sort() },
    metrics: metricsText?.includes('http_requests_total') ?? false,
  }),
);
`;

const COMPILER_OPTIONS: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2023,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
  types: ['node'],
  skipLibCheck: true,
};

/** The type checker's errors for the program, one line each. */
function typeErrors(file: string): string[] {
  const program = ts.createProgram([file], COMPILER_OPTIONS);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (!diagnostic.file || diagnostic.start === undefined) return text;
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    return `${diagnostic.file.fileName}:${line + 1}: ${text}`;
  });
}

describe('A client generated from the OpenAPI document', () => {
  const context = useTestService({ env: { SERVICE_WINDOW_ENFORCE: 'false' } });

  beforeAll(async () => {
    await mkdir(WORK_DIR, { recursive: true });
  });
  afterAll(async () => {
    await rm(WORK_DIR, { recursive: true, force: true });
  });

  it('type-checks a program that uses the API, and that program gets what its types say', async () => {
    const { body: document } = await http<Parameters<typeof openapiTS>[0]>(
      context.service.url,
      'GET',
      '/docs-json',
    );
    // openapi-typescript's defaults, as a client's developer would run it.
    const schema = astToString(await openapiTS(document));
    const program = new URL('client.ts', WORK_DIR);
    await writeFile(new URL('package.json', WORK_DIR), '{ "type": "module" }\n');
    await writeFile(new URL('schema.d.ts', WORK_DIR), schema);
    await writeFile(program, CLIENT_PROGRAM);

    expect(typeErrors(fileURLToPath(program))).toEqual([]);

    const compiled = ts.transpileModule(CLIENT_PROGRAM, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2023 },
    });
    const runnable = new URL('client.js', WORK_DIR);
    await writeFile(runnable, compiled.outputText);
    const { stdout } = await run(
      process.execPath,
      [
        fileURLToPath(runnable),
        context.service.url,
        ADMIN_PASSWORD,
        PHONE_NUMBER_ID,
        VALID_TOKEN,
        TO,
      ],
      { timeout: 20_000 },
    );
    const result = JSON.parse(stdout) as {
      status: string;
      updated: boolean;
      key_prefix: string;
      wamids: string[];
      stored: { wamid: string; direction: string; contact: string };
      refused: { status: number; code: string; fields: string[] };
      metrics: boolean;
    };
    expect(result).toEqual({
      status: 'connected',
      updated: true,
      key_prefix: 'mck_',
      wamids: [
        expect.stringMatching(/^wamid\./),
        expect.stringMatching(/^wamid\./),
        expect.stringMatching(/^wamid\./),
        expect.stringMatching(/^wamid\./),
      ],
      stored: { wamid: result.wamids[0], direction: 'outbound', contact: TO },
      refused: { status: 400, code: 'validation_failed', fields: ['body', 'to'] },
      metrics: true,
    });

    // What reached the platform is what the typed program asked for.
    const sent = context.platform.sentMessages();
    expect(sent.map((message) => message.type)).toEqual([
      'text',
      'interactive',
      'interactive',
      'template',
    ]);
    expect(sent[1]).toMatchObject({ interactive: { type: 'button' } });
    expect(sent[2]).toMatchObject({
      interactive: { type: 'list', action: { button: 'Menu' } },
    });
    expect(sent[3]).toMatchObject({
      template: {
        components: [
          {
            parameters: [
              { type: 'currency', currency: { code: 'BRL', amount_1000: 12500 } },
              { type: 'date_time', date_time: { fallback_value: '23/11/2026' } },
            ],
          },
        ],
      },
    });
  });
});
