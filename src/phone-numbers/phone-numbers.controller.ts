import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ClientInstance } from '../auth/client-context.js';
import { AppException } from '../common/app.exception.js';
import { InstanceScopedDto } from '../common/instance-scoped.dto.js';
import { ApiKeyAuth } from '../common/public.decorator.js';
import { PlatformClient } from '../platform/platform-client.service.js';
import { RateLimiter, type RateLimit } from '../redis/rate-limiter.service.js';
import {
  PhoneNumberListDto,
  RegisterNumberDto,
  RequestCodeDto,
  SuccessDto,
  VerifyCodeDto,
} from './dto/phone-number.dto.js';
import type { Instance } from './entities/instance.entity.js';
import { InstancesService } from './instances.service.js';

/** Three codes at once, then one every ten minutes. */
const REQUEST_CODE_LIMIT: RateLimit = { perSecond: 1 / 600, burst: 3 };

@ApiTags('phone numbers')
@ApiBearerAuth('api-key')
@ApiKeyAuth()
@Controller('instance')
export class PhoneNumbersController {
  constructor(
    private readonly instances: InstancesService,
    private readonly platform: PlatformClient,
    private readonly limiter: RateLimiter,
  ) {}

  @Get('phone_numbers')
  @ApiOkResponse({ type: PhoneNumberListDto })
  async list(
    @Query() _query: InstanceScopedDto,
    @ClientInstance() instance: Instance,
  ): Promise<PhoneNumberListDto> {
    const data = await this.platform.listPhoneNumbers(
      instance.channel_account_id,
      this.instances.accessToken(instance),
    );
    return { data };
  }

  @Post('register')
  @HttpCode(200)
  @ApiOkResponse({ type: SuccessDto })
  async register(
    @Body() dto: RegisterNumberDto,
    @ClientInstance() instance: Instance,
  ): Promise<SuccessDto> {
    await this.platform.register(instance.phone_number_id, this.instances.accessToken(instance), {
      pin: dto.pin,
    });
    return { success: true };
  }

  @Post('request_code')
  @HttpCode(200)
  @ApiOkResponse({ type: SuccessDto })
  async requestCode(
    @Body() dto: RequestCodeDto,
    @ClientInstance() instance: Instance,
  ): Promise<SuccessDto> {
    // Each call texts or calls a person: a few per number, whatever the key's own limit.
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
    await this.platform.requestCode(
      instance.phone_number_id,
      this.instances.accessToken(instance),
      {
        code_method: dto.code_method,
        language: dto.language,
      },
    );
    return { success: true };
  }

  @Post('verify_code')
  @HttpCode(200)
  @ApiOkResponse({ type: SuccessDto })
  async verifyCode(
    @Body() dto: VerifyCodeDto,
    @ClientInstance() instance: Instance,
  ): Promise<SuccessDto> {
    await this.platform.verifyCode(
      instance.phone_number_id,
      this.instances.accessToken(instance),
      dto.code,
    );
    return { success: true };
  }
}
