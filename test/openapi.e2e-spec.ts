import { Validator } from '@seriousme/openapi-schema-validator';
import { servedRoutes } from '../src/app.setup.js';
import { SEND_KINDS } from '../src/send/send-kinds.js';
import { http, useTestService } from './support/test-app.js';

interface Document {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      { security?: Array<Record<string, unknown>>; responses: Record<string, unknown> }
    >
  >;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
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
        // The queue dashboard is a web UI, not part of the API.
        !route.url.startsWith('/admin/queues') &&
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
    expect(document.paths['/send/text'].post.security).toEqual([{ 'api-key': [] }]);
    // A worked example for each send type.
    for (const kind of SEND_KINDS) {
      const body = (
        document.paths[`/send/${kind}`].post as {
          requestBody?: { content: Record<string, { examples?: object }> };
        }
      ).requestBody;
      expect(Object.keys(body?.content['application/json'].examples ?? {}).length).toBeGreaterThan(
        0,
      );
    }
    expect(document.paths['/admin/instances'].get.security).toEqual([{ 'admin-jwt': [] }]);
  });
});
