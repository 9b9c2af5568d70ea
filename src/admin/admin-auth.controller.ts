import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
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
    summary: 'Log in: ADMIN_USERNAME or an account (admin or operator)',
    description:
      "Answers the JWT the admin routes take (an operator's opens none of them: 403 forbidden), " +
      'and sets an httpOnly "known device" cookie ' +
      '(30 days). 10 failed attempts for a username from one address (an IPv6 /64), or 20 from ' +
      'one address whatever the username, within 15 minutes → 429 to that address until the ' +
      'window passes. Beyond 10 failures for a username from every address, its attempts from ' +
      'browsers without its known-device cookie share one pace, 1 a second across all ' +
      'addresses: each waits up to 2 s for its slot, else 429 with Retry-After.',
  })
  @ApiOkResponse({
    type: LoginResponseDto,
    headers: {
      'Set-Cookie': {
        description:
          'The known-device cookie (HttpOnly, SameSite=Strict, Path=/admin, Secure in ' +
          "production): this browser then skips the username's pace while it is under attack",
        schema: { type: 'string' },
      },
    },
  })
  @ApiErrors(
    invalidRequest(LoginDto, { username: 'admin' }, 'no password'),
    new AppException('invalid_credentials', 'Wrong username or password'),
    {
      error: new AppException('rate_limited', 'Too many failed logins; try again in 840 s'),
      summary: 'too many failed logins',
    },
    {
      error: new AppException(
        'rate_limited',
        'Too many failed logins for this username; try again shortly',
      ),
      summary: 'username paced',
    },
    new AppException('unavailable', 'Login is unavailable right now; try again shortly'),
  )
  async login(
    @Body() dto: LoginDto,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<LoginResponseDto> {
    const answer = await this.auth.login(dto, request.ip, request.headers.cookie);
    void reply.header('set-cookie', this.auth.knownDeviceCookie(answer.username));
    return answer;
  }
}
