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

export const INSTANCE_FROM_FORM_KEY = 'instance-from-form';

/**
 * On an @ApiKeyAuth() route with a multipart body: the guard checks the key
 * only, and the handler resolves the instance from the form's instance_id.
 */
export const InstanceFromForm = (): MethodDecorator => SetMetadata(INSTANCE_FROM_FORM_KEY, true);
