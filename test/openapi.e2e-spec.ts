import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { servedRoutes } from '../src/app.setup.js';
import { ERROR_STATUS, type ErrorCode } from '../src/common/error-codes.js';
import { offlineOpenApiDocument } from '../src/openapi-offline.js';
import { SEND_KINDS } from '../src/send/send-kinds.js';
import { codeSpans, section, tableRows } from './support/markdown.js';
import { http, useTestService } from './support/test-app.js';

interface Media {
  schema?: Record<string, unknown>;
  examples?: Record<string, { summary?: string; value: unknown }>;
}

interface Response {
  description: string;
  content?: Record<string, Media>;
}

interface Operation {
  operationId?: string;
  summary?: string;
  security?: Array<Record<string, unknown>>;
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, Response>;
}

interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
}

/** Every operation of the document, with its path and method. */
function operations(
  document: Document,
): Array<{ path: string; method: string; operation: Operation }> {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ path, method, operation })),
  );
}

/** The routes the README's API table names, as `GET /admin/instances/{}`. */
function readmeRoutes(): string[] {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const routes: string[] = [];
  for (const [cell] of tableRows(section(readme, '## API'))) {
    let methods: string[] = [];
    for (const span of codeSpans(cell)) {
      const match = /^(?:([A-Z]+(?:\/[A-Z]+)*) )?(\/\S*)$/.exec(span);
      if (!match) continue;
      // `GET /health`, `/health/live`: a path alone takes the methods before it.
      if (match[1]) methods = match[1].split('/');
      const path = match[2].split('?')[0].replace(/\{[^}]+\}/g, '{}');
      for (const method of methods) routes.push(`${method} ${path}`);
    }
  }
  return routes;
}

describe('OpenAPI document', () => {
  const context = useTestService();

  it('is served at /docs-json as valid OpenAPI 3, with the UI at /docs', async () => {
    const answer = await http<Document>(context.service.url, 'GET', '/docs-json');
    expect(answer.status).toBe(200);
    expect(answer.body.openapi).toMatch(/^3\./);
    const result = await new Validator().validate(answer.body as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    const ui = await http(context.service.url, 'GET', '/docs');
    expect(ui.status).toBe(200);
    expect(ui.text).toContain('swagger');
  });

  it('documents every route the app serves, the two auth schemes and the error body', async () => {
    const { body: document } = await http<Document>(context.service.url, 'GET', '/docs-json');
    const served = (servedRoutes.get(context.service.app) ?? []).filter(
      (route) =>
        !route.url.startsWith('/docs') &&
        // The queue dashboard and the console are web UIs, not part of the API.
        !route.url.startsWith('/admin/queues') &&
        !route.url.startsWith('/console') &&
        !['HEAD', 'OPTIONS'].includes(route.method),
    );
    expect(served.length).toBeGreaterThan(30);
    const missing = served.filter((route) => {
      const path = route.url.replace(/:(\w+)/g, '{$1}');
      return !document.paths[path]?.[route.method.toLowerCase()];
    });
    expect(missing).toEqual([]);

    expect(Object.keys(document.components.securitySchemes).sort()).toEqual([
      'admin-jwt',
      'api-key',
    ]);
    expect(document.components.schemas.ErrorBodyDto).toBeDefined();
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        expect({ path, method, default: 'default' in operation.responses }).toEqual({
          path,
          method,
          default: true,
        });
      }
    }
    expect(document.paths['/send/text'].post.security).toEqual([
      { 'api-key': [] },
      { 'admin-jwt': [] },
    ]);
    // A worked example for each send type.
    for (const kind of SEND_KINDS) {
      const body = document.paths[`/send/${kind}`].post.requestBody;
      expect(Object.keys(body?.content['application/json'].examples ?? {}).length).toBeGreaterThan(
        0,
      );
    }
    expect(document.paths['/admin/instances'].get.security).toEqual([{ 'admin-jwt': [] }]);
  });

  it('is the document npm run lint:openapi builds without the app', async () => {
    const { body: served } = await http<Document>(context.service.url, 'GET', '/docs-json');
    expect(JSON.parse(JSON.stringify(await offlineOpenApiDocument()))).toEqual(served);
  });

  it('gives every operation a summary and a readable, unique operationId', async () => {
    const { body: document } = await http<Document>(context.service.url, 'GET', '/docs-json');
    const all = operations(document);
    const ids = all.map(({ operation }) => operation.operationId);
    for (const { path, method, operation } of all) {
      expect({ path, method, id: operation.operationId }).toEqual({
        path,
        method,
        id: expect.stringMatching(/^[a-z][a-zA-Z]+$/),
      });
      expect({ path, method, summary: operation.summary }).toEqual({
        path,
        method,
        summary: expect.stringMatching(/\w{3}/),
      });
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect(document.paths['/send/text'].post.operationId).toBe('sendText');
    expect(document.paths['/send/interactive'].post.operationId).toBe('sendInteractive');
    expect(document.paths['/admin/instances'].post.operationId).toBe('createInstance');
    expect(document.paths['/admin/instances/{id}'].patch.operationId).toBe('updateInstance');
  });

  it('says which operations are public (security: []) and authenticates the others', async () => {
    const { body: document } = await http<Document>(context.service.url, 'GET', '/docs-json');
    const open = operations(document)
      .filter(({ operation }) => operation.security?.length === 0)
      .map(({ operation }) => operation.operationId)
      .sort();
    expect(open).toEqual([
      'downloadMediaLink',
      'endSession',
      'getHealth',
      'getLiveness',
      'getMetrics',
      'getReadiness',
      'login',
      'receiveWebhook',
      'startSession',
      'verifyWebhook',
    ]);
    const both: string[] = [];
    for (const { path, method, operation } of operations(document)) {
      if (operation.security?.length === 0) continue;
      // One scheme, or (the inbox's reads) an API key or a person's token.
      const schemes = operation.security!.map((requirement) => Object.keys(requirement));
      expect({ path, method, schemes: schemes.every((names) => names.length === 1) }).toEqual({
        path,
        method,
        schemes: true,
      });
      const names = schemes.map(([name]) => name).sort();
      if (names.length === 1) expect(['admin-jwt', 'api-key']).toContain(names[0]);
      else {
        expect(names).toEqual(['admin-jwt', 'api-key']);
        both.push(operation.operationId!);
      }
    }
    // The inbox: what a person who logged in reads and does, besides a client's key.
    expect(both.sort()).toEqual(
      [
        'downloadMedia',
        'endHandoff',
        'getConversation',
        'getMediaInfo',
        'getMessage',
        'listContacts',
        'liveStream',
        'markContactRead',
        ...SEND_KINDS.map((kind) => `send${kind[0].toUpperCase()}${kind.slice(1)}`),
        'startHandoff',
        'uploadMedia',
        'listTemplates',
        'getTemplate',
        'createTemplate',
        'deleteTemplate',
        'previewTemplate',
        'syncTemplates',
        'uploadCampaign',
        'createCampaign',
        'listCampaigns',
        'getCampaign',
        'listCampaignRecipients',
        'actOnCampaign',
      ].sort(),
    );
    // Each of them shows what an operator's token may be answered.
    for (const { operation } of operations(document)) {
      if (!both.includes(operation.operationId!)) continue;
      expect(JSON.stringify(operation.responses['403'])).toContain(
        'This account does not answer for instance',
      );
    }
    expect(document.components.securitySchemes['api-key']).toEqual({
      type: 'http',
      scheme: 'bearer',
      description: expect.any(String),
    });
  });

  it("shows each error response with examples of that operation's own errors", async () => {
    const { body: document } = await http<Document>(context.service.url, 'GET', '/docs-json');
    for (const { path, method, operation } of operations(document)) {
      const statuses = Object.keys(operation.responses).filter((status) => !/^[23]/.test(status));
      expect({ path, method, fourHundreds: statuses.some((s) => s.startsWith('4')) }).toEqual({
        path,
        method,
        fourHundreds: !path.startsWith('/health'),
      });
      for (const status of statuses) {
        const media = operation.responses[status].content?.['application/json'];
        const examples = Object.values(media?.examples ?? {});
        if (path === '/health/ready' && status === '503') continue; // a readiness report
        expect({ path, method, status, examples: examples.length > 0 }).toEqual({
          path,
          method,
          status,
          examples: true,
        });
        for (const { value } of examples) {
          const body = value as { statusCode: number; code: ErrorCode; details?: unknown[] };
          // A validation example is computed from a request its DTO must refuse.
          if (body.code === 'validation_failed') {
            const namesAField = (body.details?.length ?? 0) > 0;
            expect({ path, method, namesAField }).toEqual({ path, method, namesAField: true });
          }
          // Each example is an answer of that status ("default": any other, here 500).
          expect(ERROR_STATUS[body.code]).toBe(body.statusCode);
          expect(String(body.statusCode)).toBe(status === 'default' ? '500' : status);
        }
      }
    }
    const errorMessages = (path: string, method: string): string[] =>
      Object.values(document.paths[path][method].responses).flatMap((response) =>
        Object.values(response.content?.['application/json']?.examples ?? {}).map(
          ({ value }) => (value as { message: string }).message,
        ),
      );
    expect(errorMessages('/send/interactive', 'post')).toContain(
      'buttons: must hold 1 to 3 reply buttons',
    );
    expect(errorMessages('/instance/register', 'post')).toContain('pin: must be exactly 6 digits');
    expect(errorMessages('/admin/auth/login', 'post')).toContain('Wrong username or password');
    expect(errorMessages('/admin/instances', 'get')).not.toContain(
      'buttons: must hold 1 to 3 reply buttons',
    );
  });

  it('types what generated clients need: nullable ids, template objects, error details', async () => {
    const { body: document } = await http<Document>(context.service.url, 'GET', '/docs-json');
    const schema = (name: string): { properties: Record<string, Record<string, unknown>> } =>
      document.components.schemas[name] as { properties: Record<string, Record<string, unknown>> };
    for (const field of ['business_id', 'platform_app_id']) {
      expect(schema('UpdateInstanceDto').properties[field]).toMatchObject({
        type: 'string',
        nullable: true,
      });
    }
    expect(schema('TemplateParameterDto').properties.currency).toMatchObject({
      allOf: [{ $ref: '#/components/schemas/TemplateCurrencyDto' }],
    });
    expect(schema('TemplateParameterDto').properties.date_time).toMatchObject({
      allOf: [{ $ref: '#/components/schemas/TemplateDateTimeDto' }],
    });
    expect(Object.keys(schema('TemplateCurrencyDto').properties).sort()).toEqual([
      'amount_1000',
      'code',
      'fallback_value',
    ]);
    expect(Object.keys(schema('TemplateDateTimeDto').properties)).toEqual(['fallback_value']);
    expect(schema('ErrorBodyDto').properties.details.items).toEqual({
      oneOf: [
        { $ref: '#/components/schemas/FieldErrorDetailDto' },
        { $ref: '#/components/schemas/PlatformErrorDetailDto' },
        { $ref: '#/components/schemas/TemplateLanguagesDetailDto' },
        { $ref: '#/components/schemas/TemplateStatusDetailDto' },
        { $ref: '#/components/schemas/StateDetailDto' },
      ],
    });
    expect(schema('MessageDto').properties.errors).toMatchObject({
      type: 'array',
      nullable: true,
      items: { $ref: '#/components/schemas/MessageErrorDto' },
    });

    const content = (path: string, method: string): Record<string, Media> | undefined =>
      document.paths[path][method].responses['200'].content;
    expect(content('/metrics', 'get')?.['text/plain'].schema).toMatchObject({ type: 'string' });
    expect(content('/webhooks/messenger', 'get')?.['text/plain'].schema).toMatchObject({
      type: 'string',
    });
    expect(content('/media/{mediaId}', 'get')?.['application/octet-stream'].schema).toEqual({
      type: 'string',
      format: 'binary',
    });

    expect(
      document.paths['/send/interactive'].post.requestBody?.content['application/json'].schema,
    ).toEqual({
      oneOf: [
        { $ref: '#/components/schemas/SendInteractiveButtonsDto' },
        { $ref: '#/components/schemas/SendInteractiveListDto' },
        { $ref: '#/components/schemas/SendInteractiveCtaUrlDto' },
      ],
      discriminator: {
        propertyName: 'type',
        mapping: {
          buttons: '#/components/schemas/SendInteractiveButtonsDto',
          list: '#/components/schemas/SendInteractiveListDto',
          cta_url: '#/components/schemas/SendInteractiveCtaUrlDto',
        },
      },
    });
  });

  it("names every served route in the README's API table, and no route that is not served", () => {
    const served = new Set(
      (servedRoutes.get(context.service.app) ?? [])
        .filter(
          (route) =>
            !['HEAD', 'OPTIONS'].includes(route.method) &&
            // Swagger UI's assets and the dashboard's own API are parts of the pages.
            !route.url.startsWith('/docs/') &&
            !route.url.startsWith('/admin/queues/') &&
            !route.url.startsWith('/console'),
        )
        .map((route) => `${route.method} ${route.url.replace(/:\w+/g, '{}')}`),
    );
    const documented = new Set(readmeRoutes());
    expect([...served].filter((route) => !documented.has(route)).sort()).toEqual([]);
    expect([...documented].filter((route) => !served.has(route)).sort()).toEqual([]);
  });
});
