import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { Public } from '../auth/auth.decorators.js';
import { ApiErrors, invalidRequest } from '../common/api-errors.js';
import { AppException } from '../common/app.exception.js';
import { AdminAuthService } from './admin-auth.service.js';
import { LoginDto, LoginResponseDto } from './dto/login.dto.js';

@ApiTags('admin: auth')
@Controller('admin/auth')
export class AdminAuthController {
  constructor(private readonly auth: AdminAuthService) {}

  @Public()
  @Post('login')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'login',
    summary: 'Log in as admin',
    description:
      'Answers the JWT the admin routes take. 10 failed attempts for a username from one ' +
      'address, or 20 from one address whatever the username, within 15 minutes → 429 to that ' +
      'address until the window passes. Failures for a username from every address only slow ' +
      'its attempts (at most 2 s each), never refuse them.',
  })
  @ApiOkResponse({ type: LoginResponseDto })
  @ApiErrors(
    invalidRequest(LoginDto, { username: 'admin' }, 'no password'),
    new AppException('invalid_credentials', 'Wrong username or password'),
    {
      error: new AppException('rate_limited', 'Too many failed logins; try again in 840 s'),
      summary: 'too many failed logins',
    },
    new AppException('unavailable', 'Login is unavailable right now; try again shortly'),
  )
  login(@Body() dto: LoginDto, @Req() request: FastifyRequest): Promise<LoginResponseDto> {
    return this.auth.login(dto, request.ip);
  }
}
