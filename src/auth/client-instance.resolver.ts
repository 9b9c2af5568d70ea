import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { AppException } from '../common/app.exception.js';
import type { Instance } from '../instances/instance.types.js';
import { InstancesService } from '../instances/instances.service.js';
import type { ApiKeyPrincipal } from './api-keys.service.js';

/**
 * Picks the instance an API-key request acts on: the `instance_id` it names,
 * or the one its key is bound to. Unknown → 404, another instance than the
 * key's → 403, deactivated → 409.
 */
@Injectable()
export class ClientInstanceResolver {
  constructor(private readonly instances: InstancesService) {}

  async resolve(principal: ApiKeyPrincipal, requested: unknown): Promise<Instance> {
    if (requested !== undefined && requested !== null) {
      if (typeof requested !== 'string' || !isUUID(requested)) {
        throw AppException.validation([{ field: 'instance_id', message: 'must be a UUID' }]);
      }
    }
    const wanted = (requested as string | undefined) ?? principal.boundInstanceId;
    if (!wanted) {
      throw AppException.validation([
        { field: 'instance_id', message: 'is required (this API key is not bound to an instance)' },
      ]);
    }
    if (principal.boundInstanceId && wanted !== principal.boundInstanceId) {
      throw new AppException('instance_forbidden', 'This API key is bound to another instance');
    }
    const instance = await this.instances.findById(wanted);
    if (!instance) throw new AppException('instance_not_found', `Instance ${wanted} not found`);
    if (!instance.is_active) {
      throw new AppException('instance_inactive', `Instance ${wanted} is deactivated`);
    }
    return instance;
  }
}
