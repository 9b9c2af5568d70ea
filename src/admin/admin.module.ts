import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { InstancesModule } from '../instances/instances.module.js';
import { AdminAuthController } from './admin-auth.controller.js';
import { AdminAuthService } from './admin-auth.service.js';
import { ApiKeysController } from './api-keys.controller.js';
import { InstancesController } from './instances.controller.js';
import { KnownDevices } from './known-device.js';
import { LoginThrottleService } from './login-throttle.service.js';

@Module({
  imports: [AuthModule, InstancesModule],
  controllers: [AdminAuthController, InstancesController, ApiKeysController],
  providers: [AdminAuthService, KnownDevices, LoginThrottleService],
  exports: [AdminAuthService],
})
export class AdminModule {}
