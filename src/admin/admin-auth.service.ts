import { Injectable, Logger } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { AppException } from '../common/app.exception.js';
import { sameSecret } from '../common/secrets.js';
import { AppConfig } from '../config/app-config.js';
import type { LoginDto, LoginResponseDto } from './dto/login.dto.js';
import { CREDENTIALS_CLAIM, credentialsStamp } from '../auth/jwt.strategy.js';
import { LoginThrottleService } from './login-throttle.service.js';

@Injectable()
export class AdminAuthService {
  private readonly logger = new Logger(AdminAuthService.name);

  constructor(
    private readonly config: AppConfig,
    private readonly jwt: JwtService,
    private readonly throttle: LoginThrottleService,
  ) {}

  /**
   * Checks the admin username and password under the failure limits (429
   * rate_limited while this address is locked out, a bounded wait while the
   * username is under attack, 401 invalid_credentials when wrong). Used by the
   * login and by the queue dashboard's Basic auth.
   */
  async verifyCredentials(username: string, password: string, address: string): Promise<void> {
    // Counted before the comparison: concurrent guesses cannot outrun the limit.
    await this.throttle.attempt(address, username);
    const userOk = sameSecret(username, this.config.ADMIN_USERNAME);
    const passwordOk = sameSecret(password, this.config.ADMIN_PASSWORD);
    if (!userOk || !passwordOk) {
      this.logger.warn({ address }, 'failed admin login');
      throw new AppException('invalid_credentials', 'Wrong username or password');
    }
    await this.throttle.succeeded(address, username);
  }

  async login(dto: LoginDto, address: string): Promise<LoginResponseDto> {
    await this.verifyCredentials(dto.username, dto.password, address);
    const token = await this.jwt.signAsync({
      sub: this.config.ADMIN_USERNAME,
      [CREDENTIALS_CLAIM]: credentialsStamp(this.config),
    });
    return {
      token,
      username: this.config.ADMIN_USERNAME,
      expires_in: this.config.JWT_EXPIRES_IN,
    };
  }
}
