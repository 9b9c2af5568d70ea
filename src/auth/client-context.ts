import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { PersonRef } from '../accounts/account.types.js';
import type { Instance } from '../instances/instance.types.js';
import type { ApiKeyPrincipal } from './api-keys.service.js';
import type { AdminPrincipal } from './jwt.strategy.js';

/** Who called an API-key or inbox route, and the (active) instance the request acts on. */
export interface ClientContext {
  /** null for the global API_KEY, and for a person. */
  apiKeyId: string | null;
  instance: Instance;
  /** On an inbox route called with a person's token: who. */
  person?: PersonRef;
}

declare module 'fastify' {
  interface FastifyRequest {
    client?: ClientContext;
    /** Set instead of `client` on @InstanceFromForm() routes. */
    apiKeyPrincipal?: ApiKeyPrincipal;
  }
}

/** The instance an API-key request acts on, as resolved by the global guard. */
export const ClientInstance = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Instance => {
    const client = context.switchToHttp().getRequest<FastifyRequest>().client;
    if (!client) throw new Error('ClientInstance used on a route without @ApiKeyAuth()');
    return client.instance;
  },
);

/**
 * The person who called an inbox route with their token, or null for an API
 * key: what they send and the pauses they start are recorded as theirs.
 */
export const CallingPerson = createParamDecorator(
  (_data: unknown, context: ExecutionContext): PersonRef | null =>
    context.switchToHttp().getRequest<FastifyRequest>().client?.person ?? null,
);

/** The admin who called an admin route, as the records that name a person keep them. */
export const CallingAdmin = createParamDecorator(
  (_data: unknown, context: ExecutionContext): PersonRef => {
    const user = context
      .switchToHttp()
      .getRequest<FastifyRequest & { user?: AdminPrincipal }>().user;
    if (!user) throw new Error('CallingAdmin used on a route without @AdminAuth()');
    return { accountId: user.accountId, displayName: user.displayName };
  },
);
