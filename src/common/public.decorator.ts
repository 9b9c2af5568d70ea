import { SetMetadata } from '@nestjs/common';

export const AUTH_KIND_KEY = 'auth-kind';

/** Who may call a route. A route that declares none is refused (deny by default). */
export type AuthKind = 'public' | 'admin' | 'api_key';

/** Open route: no credentials needed. */
export const Public = (): ClassDecorator & MethodDecorator => SetMetadata(AUTH_KIND_KEY, 'public');

/** Admin route: the admin JWT from POST /admin/auth/login. */
export const AdminAuth = (): ClassDecorator & MethodDecorator =>
  SetMetadata(AUTH_KIND_KEY, 'admin');

/** Client route: an API key, which also selects the instance the request acts on. */
export const ApiKeyAuth = (): ClassDecorator & MethodDecorator =>
  SetMetadata(AUTH_KIND_KEY, 'api_key');
