import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { BullModule } from '@nestjs/bullmq';
import { LoggerModule } from 'nestjs-pino';
import { AdminModule } from './admin/admin.module.js';
import { AuthModule } from './auth/auth.module.js';
import { PublicOnlyGuard } from './auth/public-only.guard.js';
import { AllExceptionsFilter } from './common/all-exceptions.filter.js';
import { loggerOptions } from './common/logger.options.js';
import { AppValidationPipe } from './common/validation.js';
import { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { CryptoModule } from './crypto/crypto.module.js';
import { DatabaseModule } from './database/database.module.js';
import { HealthModule } from './health/health.module.js';
import { InstancesModule } from './instances/instances.module.js';
import { PlatformModule } from './platform/platform.module.js';
import { MediaModule } from './media/media.module.js';
import { MessagesModule } from './messages/messages.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { RedisModule } from './redis/redis.module.js';
import { SendModule } from './send/send.module.js';
import { SendingWorkerModule } from './send/sending.module.js';
import { TurnsModule } from './turns/turns.module.js';
import { WebhookWorkerModule } from './webhook/webhook-worker.module.js';
import { WebhookModule } from './webhook/webhook.module.js';

@Module({})
export class AppModule {
  /** The whole service for one configuration; APP_ROLE decides which parts run. */
  static forRoot(config: AppConfig): DynamicModule {
    const imports: ModuleMetadata['imports'] = [
      ConfigModule.forRoot(config),
      LoggerModule.forRoot(loggerOptions(config)),
      DatabaseModule,
      RedisModule,
      BullModule.forRoot({
        connection: { url: config.REDIS_URL },
        prefix: config.REDIS_PREFIX,
      }),
      CryptoModule,
      PlatformModule,
      HealthModule,
      MetricsModule,
    ];
    if (config.runsHttpApi) {
      imports.push(
        AuthModule,
        InstancesModule,
        AdminModule,
        MessagesModule,
        SendModule,
        MediaModule,
        WebhookModule,
        TurnsModule,
      );
    }
    if (config.runsWorkers) imports.push(WebhookWorkerModule, SendingWorkerModule);
    return {
      module: AppModule,
      imports,
      providers: [
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        { provide: APP_PIPE, useClass: AppValidationPipe },
        // The API's guard comes with AuthModule; a worker still denies by default.
        ...(config.runsHttpApi ? [] : [{ provide: APP_GUARD, useClass: PublicOnlyGuard }]),
      ],
    };
  }
}
