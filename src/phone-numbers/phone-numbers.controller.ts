import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ClientInstance } from '../auth/client-context.js';
import { ApiErrors, invalidRequest } from '../common/api-errors.js';
import { AppException } from '../common/app.exception.js';
import { InstanceScopedDto } from '../common/instance-scoped.dto.js';
import { ApiKeyAuth } from '../auth/auth.decorators.js';
import {
  PhoneNumberListDto,
  RegisterNumberDto,
  RequestCodeDto,
  SuccessDto,
  VerifyCodeDto,
} from './dto/phone-number.dto.js';
import type { Instance } from '../instances/instance.types.js';
import {
  platformRejected,
  PLATFORM_INVALID_TOKEN,
  PLATFORM_UNAVAILABLE,
} from '../platform/platform-error-examples.js';
import { PhoneNumbersService } from './phone-numbers.service.js';

@ApiTags('phone numbers')
@ApiKeyAuth()
@Controller('instance')
export class PhoneNumbersController {
  constructor(private readonly numbers: PhoneNumbersService) {}

  @Get('phone_numbers')
  @ApiOperation({
    operationId: 'listPhoneNumbers',
    summary: "List the business account's phone numbers",
  })
  @ApiOkResponse({ type: PhoneNumberListDto })
  @ApiErrors(
    invalidRequest(InstanceScopedDto, { instance_id: '42' }, 'instance_id is not a UUID'),
    PLATFORM_INVALID_TOKEN,
    PLATFORM_UNAVAILABLE,
  )
  async list(
    @Query() _query: InstanceScopedDto,
    @ClientInstance() instance: Instance,
  ): Promise<PhoneNumberListDto> {
    return { data: await this.numbers.list(instance) };
  }

  @Post('register')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'registerPhoneNumber',
    summary: 'Register the number with its two-step verification PIN',
  })
  @ApiOkResponse({ type: SuccessDto })
  @ApiErrors(
    invalidRequest(RegisterNumberDto, { pin: '12345' }, 'a PIN of 5 digits'),
    platformRejected(133005, '(#133005) Two step verification PIN Mismatch', 'a wrong PIN'),
    PLATFORM_UNAVAILABLE,
  )
  async register(
    @Body() dto: RegisterNumberDto,
    @ClientInstance() instance: Instance,
  ): Promise<SuccessDto> {
    await this.numbers.register(instance, dto.pin);
    return { success: true };
  }

  @Post('request_code')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'requestVerificationCode',
    summary: 'Have the platform text or call a verification code',
    description: 'At most 3 per number per 30 minutes: each texts or calls a person.',
  })
  @ApiOkResponse({ type: SuccessDto })
  @ApiErrors(
    invalidRequest(
      RequestCodeDto,
      { code_method: 'EMAIL', language: 'pt_BR' },
      'an unknown method',
    ),
    {
      error: new AppException(
        'rate_limited',
        'Verification codes for this number are limited to 3 per 30 minutes; retry in 1200 s',
      ),
      summary: 'a fourth code within 30 minutes',
    },
    platformRejected(100, '(#100) Invalid parameter'),
    PLATFORM_UNAVAILABLE,
  )
  async requestCode(
    @Body() dto: RequestCodeDto,
    @ClientInstance() instance: Instance,
  ): Promise<SuccessDto> {
    await this.numbers.requestCode(instance, {
      code_method: dto.code_method,
      language: dto.language,
    });
    return { success: true };
  }

  @Post('verify_code')
  @HttpCode(200)
  @ApiOperation({ operationId: 'verifyCode', summary: 'Verify the number with the code received' })
  @ApiOkResponse({ type: SuccessDto })
  @ApiErrors(
    invalidRequest(VerifyCodeDto, { code: '' }, 'an empty code'),
    platformRejected(100, '(#100) Invalid parameter'),
    PLATFORM_UNAVAILABLE,
  )
  async verifyCode(
    @Body() dto: VerifyCodeDto,
    @ClientInstance() instance: Instance,
  ): Promise<SuccessDto> {
    await this.numbers.verifyCode(instance, dto.code);
    return { success: true };
  }
}
