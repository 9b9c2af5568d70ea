import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config.js';
import { InstanceStoreModule } from '../instances/instance-store.module.js';
import { ApiKeysService } from './api-keys.service.js';
import { AuthGuard, JwtAuthGuard } from './auth.guard.js';
import { ClientInstanceResolver } from './client-instance.resolver.js';
import { ApiKey } from './entities/api-key.entity.js';
import { JWT_ALGORITHM, JwtStrategy } from './jwt.strategy.js';

@Module({
  imports: [
    PassportModule,
    InstanceStoreModule,
    TypeOrmModule.forFeature([ApiKey]),
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
    ApiKeysService,
    ClientInstanceResolver,
    JwtStrategy,
    JwtAuthGuard,
    { provide: APP_GUARD, useClass: AuthGuard },
  ],
  exports: [ApiKeysService, ClientInstanceResolver, JwtModule],
})
export class AuthModule {}
