import type { FastifyRequest } from 'fastify';

/** The token of `Authorization: Bearer <token>`, if the request has one. */
export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}
