import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppException } from '../common/app.exception.js';
import { routeAuthKind } from './auth.decorators.js';

/** The global guard of a worker process, which has no credentials to check: public routes only. */
@Injectable()
export class PublicOnlyGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const kind = routeAuthKind(this.reflector, context);
    if (kind === 'public') return true;
    throw new AppException('unauthorized', 'This process serves no authenticated routes');
  }
}
