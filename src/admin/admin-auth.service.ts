import { Injectable, Logger } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { AppException } from '../common/app.exception.js';
import { sameSecret } from '../common/secrets.js';
import { AppConfig } from '../config/app-config.js';
import type { LoginDto, LoginResponseDto } from './dto/login.dto.js';
import { CREDENTIALS_CLAIM, credentialsStamp } from '../auth/jwt.strategy.js';
import { KnownDevices } from './known-device.js';
import { LoginThrottleService } from './login-throttle.service.js';

@Injectable()
export class AdminAuthService {
  private readonly logger = new Logger(AdminAuthService.name);

  constructor(
    private readonly config: AppConfig,
    private readonly jwt: JwtService,
    private readonly throttle: LoginThrottleService,
    private readonly devices: KnownDevices,
  ) {}

  /**
   * Checks the admin username and password under the failure limits (429
   * rate_limited while this address is locked out or, for a device not known
   * for the username while it is under attack, when the pace has no slot soon
   * enough; 401 invalid_credentials when wrong). Counted before the
   * comparison: concurrent guesses cannot outrun the limit.
   */
  async verifyCredentials(
    username: string,
    password: string,
    address: string,
    cookieHeader?: string,
  ): Promise<void> {
    await this.throttle.attempt(address, username, this.devices.isKnown(cookieHeader, username));
    if (!this.matches(username, password)) {
      this.logger.warn({ address }, 'failed admin login');
      throw new AppException('invalid_credentials', 'Wrong username or password');
    }
    await this.throttle.succeeded(address, username);
  }

  /**
   * The queue dashboard's Basic credentials. Its page loads many assets and
   * polls, all with the credentials: a browser known for the username is
   * compared first (after a check that its address is not locked out) and
   * only its failures are counted, so its own parallel requests never trip
   * a limit or wait for the pace. Any other browser is checked as a login.
   * Returns whether it should be marked as known.
   */
  async verifyDashboardCredentials(
    username: string,
    password: string,
    address: string,
    cookieHeader?: string,
  ): Promise<boolean> {
    if (!this.devices.isKnown(cookieHeader, username)) {
      await this.verifyCredentials(username, password, address);
      return true;
    }
    await this.throttle.assertNotLocked(address, username);
    if (this.matches(username, password)) return false;
    await this.throttle.attempt(address, username, true);
    this.logger.warn({ address }, 'failed admin login');
    throw new AppException('invalid_credentials', 'Wrong username or password');
  }

  /** A Set-Cookie value marking the browser as known for the admin username. */
  knownDeviceCookie(): string {
    return this.devices.setCookie(this.config.ADMIN_USERNAME);
  }

  private matches(username: string, password: string): boolean {
    const userOk = sameSecret(username, this.config.ADMIN_USERNAME);
    const passwordOk = sameSecret(password, this.config.ADMIN_PASSWORD);
    return userOk && passwordOk;
  }

  async login(dto: LoginDto, address: string, cookieHeader?: string): Promise<LoginResponseDto> {
    await this.verifyCredentials(dto.username, dto.password, address, cookieHeader);
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
