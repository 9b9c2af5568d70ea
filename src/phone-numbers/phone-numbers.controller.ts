import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ClientInstance } from '../auth/client-context.js';
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
import { PhoneNumbersService } from './phone-numbers.service.js';

@ApiTags('phone numbers')
@ApiKeyAuth()
@Controller('instance')
export class PhoneNumbersController {
  constructor(private readonly numbers: PhoneNumbersService) {}

  @Get('phone_numbers')
  @ApiOkResponse({ type: PhoneNumberListDto })
  async list(
    @Query() _query: InstanceScopedDto,
    @ClientInstance() instance: Instance,
  ): Promise<PhoneNumberListDto> {
    return { data: await this.numbers.list(instance) };
  }

  @Post('register')
  @HttpCode(200)
  @ApiOkResponse({ type: SuccessDto })
  async register(
    @Body() dto: RegisterNumberDto,
    @ClientInstance() instance: Instance,
  ): Promise<SuccessDto> {
    await this.numbers.register(instance, dto.pin);
    return { success: true };
  }

  @Post('request_code')
  @HttpCode(200)
  @ApiOkResponse({ type: SuccessDto })
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
  @ApiOkResponse({ type: SuccessDto })
  async verifyCode(
    @Body() dto: VerifyCodeDto,
    @ClientInstance() instance: Instance,
  ): Promise<SuccessDto> {
    await this.numbers.verifyCode(instance, dto.code);
    return { success: true };
  }
}
