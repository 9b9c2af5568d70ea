import { createHmac } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { AppException } from '../common/app.exception.js';
import { AppConfig } from '../config/app-config.js';

export interface AdminPrincipal {
  username: string;
}

export interface AdminJwtPayload {
  sub?: unknown;
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
  constructor(private readonly config: AppConfig) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      secretOrKey: config.JWT_SECRET,
      algorithms: [JWT_ALGORITHM],
      ignoreExpiration: false,
    });
  }

  validate(payload: AdminJwtPayload): AdminPrincipal {
    if (!isCurrentAdmin(payload, this.config)) {
      throw new AppException('unauthorized', 'Missing, invalid or expired admin token');
    }
    return { username: this.config.ADMIN_USERNAME };
  }
}
