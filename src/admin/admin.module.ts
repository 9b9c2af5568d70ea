import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { InstancesModule } from '../instances/instances.module.js';
import { TemplatesModule } from '../templates/templates.module.js';
import { AccountsController } from './accounts.controller.js';
import { AdminAuthController } from './admin-auth.controller.js';
import { AdminAuthService } from './admin-auth.service.js';
import { ApiKeysController } from './api-keys.controller.js';
import { InstancesController } from './instances.controller.js';
import { HistoryModule } from '../history/history.module.js';
import { KnownDevices } from './known-device.js';
import { LoginThrottleService } from './login-throttle.service.js';

@Module({
  imports: [HistoryModule, AuthModule, AccountsModule, InstancesModule, TemplatesModule],
  controllers: [AdminAuthController, InstancesController, ApiKeysController, AccountsController],
  providers: [AdminAuthService, KnownDevices, LoginThrottleService],
  exports: [AdminAuthService],
})
export class AdminModule {}
