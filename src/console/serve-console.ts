import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppException } from '../common/app.exception.js';
import { errorBody } from '../common/all-exceptions.filter.js';

/**
 * The console's policy: its own scripts and styles only (no inline code, no
 * eval), its own API and live stream, media through the service (or an
 * https link a send named), never framed.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data: https:",
  "media-src 'self' blob: https:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Where `npm run build` put the console: dist/public/console, seen from the
 * sources (src/console/, as tests run them) or from the build (dist/console/).
 */
function consoleDirectory(): string | null {
  for (const candidate of ['../../dist/public/console/', '../public/console/']) {
    const dir = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(`${dir}index.html`) && existsSync(`${dir}assets`)) return dir;
  }
  return null;
}

/**
 * Serves the console at /console/ from the api process: the same origin as
 * the API (no CORS), under a strict Content-Security-Policy. Hashed assets
 * are cached for good; the page itself never, so a deploy takes at once.
 */
export async function serveConsole(app: NestFastifyApplication): Promise<void> {
  const fastify = app.getHttpAdapter().getInstance();
  const root = consoleDirectory();
  if (!root) {
    fastify.get('/console/*', async (_request, reply) => {
      const missing = new AppException('not_found', 'The console is not built (npm run build)');
      return reply.code(404).send(errorBody(missing));
    });
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: '/console/',
    decorateReply: false,
    // A route per built file (the build is fixed once the process starts); the
    // console's own pages (/console/instances, …) are the page itself, below.
    wildcard: false,
    index: ['index.html'],
    setHeaders: (response, path) => {
      void response.header('content-security-policy', CONSOLE_CSP);
      void response.header(
        'cache-control',
        path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
    },
  });
  fastify.get('/console', async (_request, reply) => reply.redirect('/console/', 301));
  // A page of the console opened by its address (a reload, a link): the same
  // page, whose router shows it. A missing file (an asset of an older build)
  // stays a 404.
  const page = await readFile(`${root}index.html`);
  fastify.get('/console/*', async (request, reply) => {
    if (/\/assets\/|\.[a-z0-9]+$/i.test(request.url.split('?')[0])) {
      const missing = new AppException('not_found', 'No such file in the console');
      return reply.code(404).send(errorBody(missing));
    }
    return reply
      .header('content-security-policy', CONSOLE_CSP)
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .send(page);
  });
}
