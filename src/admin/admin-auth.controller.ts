import { Body, Controller, Delete, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PersonAuth, Public } from '../auth/auth.decorators.js';
import { assertFromConsole } from '../auth/credentials.js';
import { JwtStrategy, type AdminJwtPayload, type AdminPrincipal } from '../auth/jwt.strategy.js';
import { ApiErrors, invalidRequest } from '../common/api-errors.js';
import { AppException } from '../common/app.exception.js';
import { AdminAuthService } from './admin-auth.service.js';
import { LoginDto, LoginResponseDto, SessionDto } from './dto/login.dto.js';

@ApiTags('admin: auth')
@Controller('admin/auth')
export class AdminAuthController {
  constructor(
    private readonly auth: AdminAuthService,
    private readonly jwt: JwtService,
    private readonly strategy: JwtStrategy,
  ) {}

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

  @Public()
  @Post('session')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'startSession',
    summary: 'Log in to the console: the token goes in an httpOnly cookie, not in the answer',
    description:
      'As POST /admin/auth/login (same limits and errors), but the token is set as the ' +
      '`mc_session` cookie (HttpOnly, SameSite=Strict, Path=/, Secure in production), which ' +
      'no script can read. The cookie opens what the token opens; a change made with it ' +
      '(not GET) must carry the `x-console` header. Answers who logged in and their instances.',
  })
  @ApiOkResponse({
    type: SessionDto,
    headers: {
      'Set-Cookie': {
        description: 'The session cookie, and the known-device cookie as login sets it',
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
  )
  async startSession(
    @Body() dto: LoginDto,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SessionDto> {
    const answer = await this.auth.login(dto, request.ip, request.headers.cookie);
    void reply.header('set-cookie', [
      this.auth.knownDeviceCookie(answer.username),
      this.auth.sessionCookie(answer.token),
    ]);
    const person = await this.strategy.validate(
      this.jwt.decode<AdminJwtPayload & object>(answer.token),
    );
    return this.auth.session(person);
  }

  @PersonAuth()
  @Get('session')
  @ApiOperation({
    operationId: 'getSession',
    summary: 'Who the session (or token) is, and the instances whose inbox they may open',
  })
  @ApiOkResponse({ type: SessionDto })
  getSession(@Req() request: FastifyRequest & { user: AdminPrincipal }): Promise<SessionDto> {
    return this.auth.session(request.user);
  }

  @Public()
  @Delete('session')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'endSession',
    summary: 'Log out of the console: the session cookie is cleared',
    description:
      'The token itself lasts until it expires (JWT_EXPIRES_IN); a new password or a disable ' +
      'ends every session of the account at once.',
  })
  @ApiNoContentResponse({ description: 'The cookie is cleared (also when it had ended already)' })
  @ApiErrors({
    error: new AppException(
      'forbidden',
      "A change made with the console's session must come from the console (x-console header)",
    ),
    summary: 'the session cookie without the console header (another site cannot log you out)',
  })
  endSession(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): void {
    assertFromConsole(request);
    void reply.header('set-cookie', this.auth.endedSessionCookie());
  }
}
