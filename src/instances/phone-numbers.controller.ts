import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ClientInstance } from '../auth/client-context.js';
import { InstanceScopedDto } from '../common/instance-scoped.dto.js';
import { ApiKeyAuth } from '../common/public.decorator.js';
import { PlatformClient } from '../platform/platform-client.service.js';
import {
  PhoneNumberListDto,
  RegisterNumberDto,
  RequestCodeDto,
  SuccessDto,
  VerifyCodeDto,
} from './dto/phone-number.dto.js';
import type { Instance } from './entities/instance.entity.js';
import { InstancesService } from './instances.service.js';

@ApiTags('phone numbers')
@ApiBearerAuth('api-key')
@ApiKeyAuth()
@Controller('instance')
export class PhoneNumbersController {
  constructor(
    private readonly instances: InstancesService,
    private readonly platform: PlatformClient,
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
