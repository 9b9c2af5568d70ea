import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { AppException } from '../common/app.exception.js';
import { AppConfig } from '../config/app-config.js';

export interface AdminPrincipal {
  username: string;
}

interface AdminJwtPayload {
  sub?: unknown;
}

export const JWT_ALGORITHM = 'HS256';

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
    if (payload.sub !== this.config.ADMIN_USERNAME) {
      throw new AppException('unauthorized', 'Missing, invalid or expired admin token');
    }
    return { username: payload.sub };
  }
}
