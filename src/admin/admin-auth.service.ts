import { createHash, timingSafeEqual } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { AppException } from '../common/app.exception.js';
import { AppConfig } from '../config/app-config.js';
import type { LoginDto, LoginResponseDto } from './dto/login.dto.js';
import { LoginThrottleService } from './login-throttle.service.js';

/** Compares in constant time whatever the lengths (hashing first evens them out). */
function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}

@Injectable()
export class AdminAuthService {
  private readonly logger = new Logger(AdminAuthService.name);

  constructor(
    private readonly config: AppConfig,
    private readonly jwt: JwtService,
    private readonly throttle: LoginThrottleService,
  ) {}

  async login(dto: LoginDto, address: string): Promise<LoginResponseDto> {
    await this.throttle.assertAllowed(address);
    const userOk = sameSecret(dto.username, this.config.ADMIN_USERNAME);
    const passwordOk = sameSecret(dto.password, this.config.ADMIN_PASSWORD);
    if (!userOk || !passwordOk) {
      await this.throttle.recordFailure(address);
      this.logger.warn({ address }, 'failed admin login');
      throw new AppException('invalid_credentials', 'Wrong username or password');
    }
    await this.throttle.reset(address);
    const token = await this.jwt.signAsync({ sub: this.config.ADMIN_USERNAME });
    return {
      token,
      username: this.config.ADMIN_USERNAME,
      expires_in: this.config.JWT_EXPIRES_IN,
    };
  }
}
