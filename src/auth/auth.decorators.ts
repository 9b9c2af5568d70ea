import { applyDecorators, SetMetadata, type ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { ApiBearerAuth, ApiSecurity } from '@nestjs/swagger';

export const AUTH_KIND_KEY = 'auth-kind';

/** Who may call a route. A route that declares none is refused (deny by default). */
export type AuthKind = 'public' | 'admin' | 'api_key' | 'inbox' | 'person';

/**
 * The security requirement that marks a public route in the generated
 * document; the document builder (openapi.ts) turns it into `security: []`,
 * which the decorators cannot state themselves.
 */
export const PUBLIC_SECURITY = 'public';

/** Open route: no credentials needed (documented as such). */
export const Public = (): ClassDecorator & MethodDecorator =>
  applyDecorators(SetMetadata(AUTH_KIND_KEY, 'public'), ApiSecurity(PUBLIC_SECURITY));

/**
 * Admin route: a JWT from POST /admin/auth/login of ADMIN_USERNAME or an admin
 * account (an operator's is refused, 403 forbidden); documented as such.
 */
export const AdminAuth = (): ClassDecorator & MethodDecorator =>
  applyDecorators(SetMetadata(AUTH_KIND_KEY, 'admin'), ApiBearerAuth('admin-jwt'));

/** Client route: an API key, which also selects the instance the request acts on (documented as such). */
export const ApiKeyAuth = (): ClassDecorator & MethodDecorator =>
  applyDecorators(SetMetadata(AUTH_KIND_KEY, 'api_key'), ApiBearerAuth('api-key'));

/**
 * Inbox route (reading contacts and conversations): an API key, or the token
 * of a person who logged in, an admin or an operator of the instance the
 * request names (documented as both).
 */
export const InboxAuth = (): ClassDecorator & MethodDecorator =>
  applyDecorators(
    SetMetadata(AUTH_KIND_KEY, 'inbox'),
    ApiBearerAuth('api-key'),
    ApiBearerAuth('admin-jwt'),
  );

/**
 * A route for whoever logged in, an admin or an operator (the session's own
 * routes); documented as the admin token's scheme.
 */
export const PersonAuth = (): ClassDecorator & MethodDecorator =>
  applyDecorators(SetMetadata(AUTH_KIND_KEY, 'person'), ApiBearerAuth('admin-jwt'));

export const INSTANCE_FROM_FORM_KEY = 'instance-from-form';

/**
 * On an @ApiKeyAuth() route with a multipart body: the guard checks the key
 * only, and the handler resolves the instance from the form's instance_id.
 */
export const InstanceFromForm = (): MethodDecorator => SetMetadata(INSTANCE_FROM_FORM_KEY, true);

/** Each route's kind, by handler and class: decorators are fixed once the classes are defined. */
const kinds = new WeakMap<object, WeakMap<object, AuthKind | null>>();

/**
 * Who may call the route a request is for (its handler's @Public, @AdminAuth
 * or @ApiKeyAuth over its class's), looked up once per route rather than
 * through the metadata on every request; undefined: it declares none.
 */
export function routeAuthKind(
  reflector: Reflector,
  context: ExecutionContext,
): AuthKind | undefined {
  const handler = context.getHandler();
  const type = context.getClass();
  let byClass = kinds.get(handler);
  if (!byClass) kinds.set(handler, (byClass = new WeakMap()));
  let kind = byClass.get(type);
  if (kind === undefined) {
    kind =
      reflector.getAllAndOverride<AuthKind | undefined>(AUTH_KIND_KEY, [handler, type]) ?? null;
    byClass.set(type, kind);
  }
  return kind ?? undefined;
}
