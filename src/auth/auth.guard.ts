import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { isUUID } from 'class-validator';
import { AuthGuard as PassportAuthGuard } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { AppException } from '../common/app.exception.js';
import { sameSecret } from '../common/secrets.js';
import { INSTANCE_FROM_FORM_KEY, routeAuthKind } from './auth.decorators.js';
import { AppConfig } from '../config/app-config.js';
import { RateLimiter } from '../redis/rate-limiter.js';
import { ApiKeysService } from './api-keys.service.js';
import { ClientInstanceResolver } from './client-instance.resolver.js';
import { assertFromConsole, bearerToken, sessionToken } from './credentials.js';
import type { AdminPrincipal } from './jwt.strategy.js';

/** Passport's JWT guard, answering with the contract's 401. */
@Injectable()
export class JwtAuthGuard extends PassportAuthGuard('jwt') {
  override handleRequest<TUser>(error: unknown, user: TUser | false): TUser {
    if (error instanceof AppException) throw error;
    if (error || !user) {
      throw new AppException('unauthorized', 'Missing, invalid or expired admin token');
    }
    return user;
  }
}

/** Three base64url parts: a JWT (an API key has no dots). */
const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]+$/;

function requestedInstanceId(request: FastifyRequest): unknown {
  const query = request.query as Record<string, unknown> | undefined;
  const body = request.body as Record<string, unknown> | undefined | null;
  const fromBody = body && typeof body === 'object' ? body.instance_id : undefined;
  return fromBody ?? query?.instance_id;
}

/**
 * The one global guard. Every route declares who may call it (@Public,
 * @AdminAuth, @ApiKeyAuth, @InboxAuth); a route that declares nothing is refused.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly jwtGuard: JwtAuthGuard,
    private readonly apiKeys: ApiKeysService,
    private readonly resolver: ClientInstanceResolver,
    private readonly limiter: RateLimiter,
    private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const kind = routeAuthKind(this.reflector, context);
    if (kind === 'public') return true;
    if (kind === 'admin' || kind === 'person') {
      const request = context
        .switchToHttp()
        .getRequest<FastifyRequest & { user?: AdminPrincipal }>();
      await this.jwtGuard.canActivate(context);
      assertFromConsole(request);
      // An operator's token opens the inbox of its instances, never an admin route.
      if (kind === 'admin' && request.user?.role !== 'admin') {
        throw new AppException('forbidden', 'This route is for admins');
      }
      return true;
    }
    if (kind === 'inbox' || kind === 'api_key') {
      const request = context.switchToHttp().getRequest<FastifyRequest>();
      const fromForm =
        this.reflector.get<boolean | undefined>(INSTANCE_FROM_FORM_KEY, context.getHandler()) ===
        true;
      const token = bearerToken(request);
      // A global API_KEY shaped like a JWT stays an API key; the console's cookie is a person's.
      const person =
        kind === 'inbox' &&
        (token === null
          ? sessionToken(request) !== null
          : JWT_SHAPE.test(token) && !this.isGlobalKey(token));
      // A person's instance comes from the query (a multipart form is read by the handler).
      if (person) await this.authenticatePerson(context, request);
      else await this.authenticateClient(request, fromForm);
      return true;
    }
    throw new AppException('unauthorized', 'This route accepts no credentials');
  }

  /**
   * A person's token on an inbox route: an admin reaches every instance, an
   * operator those it answers for (the only one, when it names none); another
   * answers 403 whether it exists or not.
   */
  private async authenticatePerson(
    context: ExecutionContext,
    request: FastifyRequest & { user?: AdminPrincipal },
  ): Promise<void> {
    await this.jwtGuard.canActivate(context);
    assertFromConsole(request);
    const user = request.user!;
    await this.limit(`account:${user.accountId ?? 'admin'}`, 'This account');
    const named = requestedInstanceId(request);
    let requested = named;
    // Anyone but an admin is held to its instances; a malformed id is left to the resolver's 400.
    if (
      user.role !== 'admin' &&
      (named === undefined || (typeof named === 'string' && isUUID(named)))
    ) {
      if (user.instanceIds.length === 0) {
        throw new AppException('instance_forbidden', 'This account answers for no instance');
      }
      const wanted =
        typeof named === 'string'
          ? named.toLowerCase()
          : user.instanceIds.length === 1
            ? user.instanceIds[0]
            : undefined;
      if (wanted === undefined) {
        throw AppException.validation([
          {
            field: 'instance_id',
            message: 'is required (this account answers for several instances)',
          },
        ]);
      }
      if (!user.instanceIds.includes(wanted)) {
        throw new AppException(
          'instance_forbidden',
          `This account does not answer for instance ${wanted}`,
        );
      }
      requested = wanted;
    }
    const instance = await this.resolver.resolve(
      { apiKeyId: null, boundInstanceId: null },
      requested,
    );
    request.client = {
      apiKeyId: null,
      instance,
      person: { accountId: user.accountId, displayName: user.displayName },
    };
  }

  private isGlobalKey(token: string): boolean {
    return this.config.API_KEY !== undefined && sameSecret(token, this.config.API_KEY);
  }

  /** 429 once the caller is over API_KEY_RATE_LIMIT, counted across processes. */
  private async limit(key: string, who: string): Promise<void> {
    const waitMs = await this.limiter.take(key, {
      perSecond: this.config.apiKeyRateLimit,
      burst: this.config.apiKeyRateBurst,
    });
    if (waitMs > 0) {
      const seconds = Math.ceil(waitMs / 1000);
      throw new AppException(
        'rate_limited',
        `${who} is over its limit of ${this.config.apiKeyRateLimit} requests per second; retry in ${seconds} s`,
        undefined,
        { 'retry-after': String(seconds) },
      );
    }
  }

  private async authenticateClient(request: FastifyRequest, fromForm: boolean): Promise<void> {
    const token = bearerToken(request);
    if (!token) {
      throw new AppException('unauthorized', 'Missing API key (Authorization: Bearer <key>)');
    }
    const principal = await this.apiKeys.authenticate(token);
    await this.limit(`api-key:${principal.apiKeyId ?? 'global'}`, 'This API key');
    if (fromForm) {
      request.apiKeyPrincipal = principal;
      return;
    }
    const instance = await this.resolver.resolve(principal, requestedInstanceId(request));
    request.client = { apiKeyId: principal.apiKeyId, instance };
  }
}
