import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import { AppModule } from './app.module.js';
import { loadConfig } from './config/load-config.js';
import { buildOpenApiDocument } from './openapi.js';

/**
 * The document /docs-json serves, built without PostgreSQL, Redis or the
 * platform: Nest's preview mode reads the modules and controllers without
 * creating any provider (`npm run lint:openapi` lints it). Nothing is
 * opened, so nothing needs closing.
 */
export async function offlineOpenApiDocument(): Promise<OpenAPIObject> {
  const { config } = loadConfig({ NODE_ENV: 'development', APP_ROLE: 'api', LOG_LEVEL: 'silent' });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config),
    new FastifyAdapter(),
    { preview: true, logger: false, abortOnError: false },
  );
  return buildOpenApiDocument(app);
}
