import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import type { FastifyRequest } from 'fastify';
import { AppException } from '../common/app.exception.js';
import { InstancesService } from '../instances/instances.service.js';
import { ApiKeysService } from './api-keys.service.js';
import { bearerToken, sessionToken } from './credentials.js';
import { JwtStrategy, type AdminJwtPayload } from './jwt.strategy.js';

/**
 * Whether the credentials a long request (a live stream) came with still
 * open its instance: the guard decides when it starts, this while it lasts.
 * An API key not revoked and bound to the instance or to none; a person's
 * token not expired, of an account still enabled, an admin's or an operator's
 * of the instance; and the instance still active.
 */
@Injectable()
export class AccessCheck {
  constructor(
    private readonly apiKeys: ApiKeysService,
    private readonly jwt: JwtService,
    private readonly strategy: JwtStrategy,
    private readonly instances: InstancesService,
  ) {}

  /** false once refused; true also when the answer cannot be had now (PostgreSQL away). */
  async stillAllowed(request: FastifyRequest, instanceId: string): Promise<boolean> {
    try {
      const instance = await this.instances.findById(instanceId);
      if (!instance?.is_active) return false;
      const token = bearerToken(request) ?? sessionToken(request);
      if (!token) return false;
      if (request.client?.person) {
        const payload = await this.jwt.verifyAsync<AdminJwtPayload & object>(token);
        const principal = await this.strategy.validate(payload);
        return principal.role === 'admin' || principal.instanceIds.includes(instanceId);
      }
      const principal = await this.apiKeys.authenticate(token);
      return principal.boundInstanceId === null || principal.boundInstanceId === instanceId;
    } catch (error) {
      // A refusal (the guard's 401 or 403), or a token that no longer verifies.
      if (error instanceof AppException) return false;
      if ((error as Error).name?.endsWith('TokenError')) return false;
      return true;
    }
  }
}
