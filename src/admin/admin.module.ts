import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { InstanceStoreModule } from '../instances/instance-store.module.js';
import { AdminAuthController } from './admin-auth.controller.js';
import { AdminAuthService } from './admin-auth.service.js';
import { ApiKeysController } from './api-keys.controller.js';
import { LoginThrottleService } from './login-throttle.service.js';

@Module({
  imports: [AuthModule, InstanceStoreModule],
  controllers: [AdminAuthController, ApiKeysController],
  providers: [AdminAuthService, LoginThrottleService],
  exports: [AdminAuthService],
})
export class AdminModule {}
