import type { FastifyRequest } from 'fastify';
import { AppException } from '../common/app.exception.js';
import { readCookie } from '../common/cookies.js';

/**
 * The console's session cookie: a person's token, httpOnly (no script reads
 * it), SameSite=Strict, Secure in production; set by POST /admin/auth/session.
 */
export const SESSION_COOKIE = 'mc_session';

/** The token of `Authorization: Bearer <token>`, if the request has one. */
export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

/** The session cookie's token, if the request has one (and no Authorization header). */
export function sessionToken(request: FastifyRequest): string | null {
  if (request.headers.authorization !== undefined) return null;
  return readCookie(request.headers.cookie, SESSION_COOKIE) ?? null;
}

/** The header the console sends with every call; a cross-site form or link cannot add one. */
export const CONSOLE_HEADER = 'x-console';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A change authenticated by the console's session cookie must carry the
 * console's header: a page of another site can make a browser send the
 * cookie (SameSite=Strict already stops most), never add a header without
 * CORS, which this service does not answer.
 */
export function assertFromConsole(request: FastifyRequest): void {
  if (SAFE_METHODS.has(request.method) || sessionToken(request) === null) return;
  if (request.headers[CONSOLE_HEADER] === undefined) {
    throw new AppException(
      'forbidden',
      `A change made with the console's session must come from the console (${CONSOLE_HEADER} header)`,
    );
  }
}
