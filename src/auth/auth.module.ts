import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';
import { AccountsModule } from '../accounts/accounts.module.js';
import { AppConfig } from '../config/app-config.js';
import { InstancesModule } from '../instances/instances.module.js';
import { AccessCheck } from './access-check.js';
import { ApiKeyStore } from './api-key.store.js';
import { ApiKeysService } from './api-keys.service.js';
import { AuthGuard, JwtAuthGuard } from './auth.guard.js';
import { ClientInstanceResolver } from './client-instance.resolver.js';
import { JWT_ALGORITHM, JwtStrategy } from './jwt.strategy.js';

@Module({
  imports: [
    PassportModule,
    InstancesModule,
    AccountsModule,
    JwtModule.registerAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        secret: config.JWT_SECRET,
        signOptions: { algorithm: JWT_ALGORITHM, expiresIn: config.JWT_EXPIRES_IN },
        verifyOptions: { algorithms: [JWT_ALGORITHM] },
      }),
    }),
  ],
  providers: [
    ApiKeyStore,
    ApiKeysService,
    ClientInstanceResolver,
    JwtStrategy,
    JwtAuthGuard,
    AccessCheck,
    { provide: APP_GUARD, useClass: AuthGuard },
  ],
  exports: [
    ApiKeysService,
    ClientInstanceResolver,
    AccessCheck,
    JwtStrategy,
    JwtModule,
    AccountsModule,
  ],
})
export class AuthModule {}
