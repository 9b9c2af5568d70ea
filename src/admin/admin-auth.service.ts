import { Injectable, Logger } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { AppException } from '../common/app.exception.js';
import { sameSecret } from '../common/secrets.js';
import { AppConfig } from '../config/app-config.js';
import type { LoginDto, LoginResponseDto, SessionDto } from './dto/login.dto.js';
import { AccountsService } from '../accounts/accounts.service.js';
import { SESSION_COOKIE } from '../auth/credentials.js';
import {
  ACCOUNT_TOKEN,
  CREDENTIALS_CLAIM,
  credentialsStamp,
  type AdminPrincipal,
} from '../auth/jwt.strategy.js';
import { InstancesService } from '../instances/instances.service.js';
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
    private readonly accounts: AccountsService,
    private readonly instances: InstancesService,
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
    asLongAsAnAccount = false,
  ): Promise<void> {
    const deviceId = this.devices.knownId(cookieHeader, username);
    await this.throttle.attempt(address, username, deviceId);
    // Once counted (a refused address spends nothing), as long as an account's login.
    if (asLongAsAnAccount) await this.accounts.spendVerification(password);
    if (!this.matches(username, password)) {
      this.logger.warn({ address }, 'failed admin login');
      throw new AppException('invalid_credentials', 'Wrong username or password');
    }
    await this.throttle.succeeded(address, username, deviceId);
  }

  /**
   * The queue dashboard's Basic credentials. Its page loads many assets and
   * polls, all with the credentials: for a browser known for the username the
   * password is compared first, then one atomic step refuses a locked-out
   * address (right password or not) and counts only a failure, so its own
   * parallel requests never trip a limit or wait for the pace, and a burst of
   * guesses gets no more tries than the limit. Any other browser, or one whose
   * cookie had 5 failures, is checked as a login. Returns whether it should be
   * marked as known.
   */
  async verifyDashboardCredentials(
    username: string,
    password: string,
    address: string,
    cookieHeader?: string,
  ): Promise<boolean> {
    const deviceId = this.devices.knownId(cookieHeader, username);
    if (deviceId !== undefined) {
      const right = this.matches(username, password);
      if (await this.throttle.knownDashboardAttempt(address, username, deviceId, right)) {
        if (right) return false;
        this.logger.warn({ address }, 'failed admin login');
        throw new AppException('invalid_credentials', 'Wrong username or password');
      }
    }
    await this.verifyCredentials(username, password, address);
    return true;
  }

  /**
   * A Set-Cookie value marking the browser as known for `username` (the
   * admin's by default; an account's in lower case, as its logins are counted).
   */
  knownDeviceCookie(username = this.config.ADMIN_USERNAME): string {
    return this.devices.setCookie(
      username === this.config.ADMIN_USERNAME ? username : username.toLowerCase(),
    );
  }

  private matches(username: string, password: string): boolean {
    const userOk = sameSecret(username, this.config.ADMIN_USERNAME);
    const passwordOk = sameSecret(password, this.config.ADMIN_PASSWORD);
    return userOk && passwordOk;
  }

  /**
   * ADMIN_USERNAME, or an enabled account (admin or operator), under the same
   * failure limits; the token names the account and a stamp of its sessions,
   * so a new password or a disable ends it.
   */
  async login(dto: LoginDto, address: string, cookieHeader?: string): Promise<LoginResponseDto> {
    const expires_in = this.config.JWT_EXPIRES_IN;
    if (sameSecret(dto.username, this.config.ADMIN_USERNAME)) {
      // As long as an account's login: timing does not single ADMIN_USERNAME out.
      await this.verifyCredentials(dto.username, dto.password, address, cookieHeader, true);
      const token = await this.jwt.signAsync({
        sub: this.config.ADMIN_USERNAME,
        [CREDENTIALS_CLAIM]: credentialsStamp(this.config),
      });
      const username = this.config.ADMIN_USERNAME;
      return {
        token,
        username,
        display_name: username,
        role: 'admin',
        account_id: null,
        expires_in,
      };
    }
    // Counted by the username in lower case, as accounts are found: "Ana" and "ANA" share limits.
    const username = dto.username.toLowerCase();
    const deviceId = this.devices.knownId(cookieHeader, username);
    await this.throttle.attempt(address, username, deviceId);
    const account = await this.accounts.verify(username, dto.password);
    if (!account) {
      this.logger.warn({ address }, 'failed login');
      throw new AppException('invalid_credentials', 'Wrong username or password');
    }
    await this.throttle.succeeded(address, username, deviceId);
    const token = await this.jwt.signAsync({
      sub: account.id,
      typ: ACCOUNT_TOKEN,
      [CREDENTIALS_CLAIM]: this.accounts.stamp(account),
    });
    return {
      token,
      username: account.username,
      display_name: account.display_name,
      role: account.role,
      account_id: account.id,
      expires_in,
    };
  }

  /** The console's session cookie carrying `token` (httpOnly, SameSite=Strict, Secure in production). */
  sessionCookie(token: string): string {
    const attributes = [
      `${SESSION_COOKIE}=${token}`,
      'Path=/',
      `Max-Age=${this.config.JWT_EXPIRES_IN}`,
      'HttpOnly',
      'SameSite=Strict',
    ];
    if (this.config.isProduction) attributes.push('Secure');
    return attributes.join('; ');
  }

  /** A Set-Cookie value that ends the console's session in the browser. */
  endedSessionCookie(): string {
    const attributes = [`${SESSION_COOKIE}=`, 'Path=/', 'Max-Age=0', 'HttpOnly', 'SameSite=Strict'];
    if (this.config.isProduction) attributes.push('Secure');
    return attributes.join('; ');
  }

  /** Who a person is, with the instances whose inbox they may open. */
  async session(person: AdminPrincipal): Promise<SessionDto> {
    const all = await this.instances.list();
    const mine =
      person.role === 'admin' ? all : all.filter((i) => person.instanceIds.includes(i.id));
    return {
      username: person.username,
      display_name: person.displayName,
      role: person.role,
      account_id: person.accountId,
      instances: mine.map((i) => ({
        id: i.id,
        name: i.name,
        display_phone_number: i.display_phone_number,
        is_active: i.is_active,
      })),
    };
  }
}
