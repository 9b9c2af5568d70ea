import { createHmac } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { AppException } from '../common/app.exception.js';
import { AccountsService } from '../accounts/accounts.service.js';
import type { AccountRole } from '../accounts/account.types.js';
import { AppConfig } from '../config/app-config.js';
import { sessionToken } from './credentials.js';

/** Who a valid console or admin token stands for. */
export interface AdminPrincipal {
  username: string;
  role: AccountRole;
  /** null for ADMIN_USERNAME, which has no account row. */
  accountId: string | null;
  displayName: string;
  /** An operator's instances. */
  instanceIds: string[];
}

/** The `typ` claim of an account's token; ADMIN_USERNAME's carries none. */
export const ACCOUNT_TOKEN = 'account';

export interface AdminJwtPayload {
  sub?: unknown;
  typ?: unknown;
  /** Stamp of the credentials the token was issued for (see credentialsStamp). */
  cv?: unknown;
  /** Expiry (seconds since the epoch); checked by the verifier when present, required here. */
  exp?: unknown;
}

export const JWT_ALGORITHM = 'HS256';
export const CREDENTIALS_CLAIM = 'cv';

/**
 * A stamp of the admin's current username and password, keyed with the JWT
 * secret (it reveals nothing of them). Tokens carry it; when ADMIN_PASSWORD
 * changes the stamp does too, and every token issued before stops working.
 */
export function credentialsStamp(config: AppConfig): string {
  return createHmac('sha256', config.JWT_SECRET)
    .update(`admin-credentials\0${config.ADMIN_USERNAME}\0${config.ADMIN_PASSWORD}`)
    .digest('base64url')
    .slice(0, 22);
}

/**
 * Whether a verified token's claims are the current admin's. The verifier
 * refuses an expired token but passes one without `exp`, which would never
 * expire: such a token is refused here.
 */
export function isCurrentAdmin(payload: AdminJwtPayload, config: AppConfig): boolean {
  return (
    typeof payload.exp === 'number' &&
    Number.isFinite(payload.exp) &&
    payload.sub === config.ADMIN_USERNAME &&
    payload.cv === credentialsStamp(config)
  );
}

/** Admin JWTs: HS256 only (a token naming another algorithm is refused), expiry enforced. */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(
    private readonly config: AppConfig,
    private readonly accounts: AccountsService,
  ) {
    super({
      // The Authorization header, else the console's session cookie.
      jwtFromRequest: ExtractJwt.fromExtractors([
        ExtractJwt.fromAuthHeaderAsBearerToken(),
        (request: FastifyRequest) => sessionToken(request),
      ]),
      secretOrKey: config.JWT_SECRET,
      algorithms: [JWT_ALGORITHM],
      ignoreExpiration: false,
    });
  }

  async validate(payload: AdminJwtPayload): Promise<AdminPrincipal> {
    if (payload.typ === ACCOUNT_TOKEN) {
      const principal =
        typeof payload.exp === 'number' &&
        typeof payload.sub === 'string' &&
        typeof payload.cv === 'string'
          ? await this.accounts.principal(payload.sub, payload.cv)
          : null;
      if (!principal) {
        throw new AppException('unauthorized', 'Missing, invalid or expired admin token');
      }
      return { ...principal };
    }
    if (!isCurrentAdmin(payload, this.config)) {
      throw new AppException('unauthorized', 'Missing, invalid or expired admin token');
    }
    const username = this.config.ADMIN_USERNAME;
    return { username, role: 'admin', accountId: null, displayName: username, instanceIds: [] };
  }
}
