import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { SERVICE_NAME, SERVICE_VERSION } from './config/service-info.js';
import { ErrorBodyDto } from './common/error-body.dto.js';

/**
 * The OpenAPI document, generated from the controllers' and DTOs'
 * decorators. Every operation also answers the contract's error body.
 */
export function buildOpenApiDocument(app: NestFastifyApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle(SERVICE_NAME)
    .setVersion(SERVICE_VERSION)
    .setDescription(
      'Connector between a business messaging platform, client systems and an AI agent. ' +
        'Admin routes take the JWT from POST /admin/auth/login; client routes take an API key.',
    )
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'admin-jwt')
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', description: 'An API key from POST /admin/api-keys' },
      'api-key',
    )
    .build();
  const document = SwaggerModule.createDocument(app, config, { extraModels: [ErrorBodyDto] });
  const methods = ['get', 'put', 'post', 'delete', 'patch'] as const;
  for (const path of Object.values(document.paths)) {
    for (const method of methods) {
      const operation = path[method];
      if (!operation) continue;
      operation.responses.default ??= {
        description: 'Error, in the contract body',
        content: {
          'application/json': { schema: { $ref: '#/components/schemas/ErrorBodyDto' } },
        },
      };
    }
  }
  return document;
}

/** Swagger UI at /docs and the document at /docs-json. */
export function serveOpenApi(app: NestFastifyApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
  });
}
