import { Injectable } from '@nestjs/common';
import { AppException } from '../common/app.exception.js';
import type { Instance } from '../instances/instance.types.js';
import { InstancesService } from '../instances/instances.service.js';
import type { PhoneNumberRecord, RequestCodeRequest } from '../platform/platform.types.js';
import { RateLimiter, type RateLimit } from '../redis/rate-limiter.js';

/** Three codes at once, then one every ten minutes. */
const REQUEST_CODE_LIMIT: RateLimit = { perSecond: 1 / 600, burst: 3 };

/** A client's view of its instance's numbers: listing, registration and verification codes. */
@Injectable()
export class PhoneNumbersService {
  constructor(
    private readonly instances: InstancesService,
    private readonly limiter: RateLimiter,
  ) {}

  list(instance: Instance): Promise<PhoneNumberRecord[]> {
    return this.instances.session(instance).phoneNumbers();
  }

  register(instance: Instance, pin: string): Promise<void> {
    return this.instances.session(instance).register({ pin });
  }

  /** Each call texts or calls a person: a few per number, whatever the key's own limit. */
  async requestCode(instance: Instance, request: RequestCodeRequest): Promise<void> {
    const waitMs = await this.limiter.take(`request-code:${instance.id}`, REQUEST_CODE_LIMIT);
    if (waitMs > 0) {
      const seconds = Math.ceil(waitMs / 1000);
      throw new AppException(
        'rate_limited',
        `Verification codes for this number are limited to 3 per 30 minutes; retry in ${seconds} s`,
        undefined,
        { 'retry-after': String(seconds) },
      );
    }
    await this.instances.session(instance).requestCode(request);
  }

  verifyCode(instance: Instance, code: string): Promise<void> {
    return this.instances.session(instance).verifyCode(code);
  }
}
