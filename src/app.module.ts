import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { BullModule } from '@nestjs/bullmq';
import { LoggerModule } from 'nestjs-pino';
import { AdminModule } from './admin/admin.module.js';
import { AuthModule } from './auth/auth.module.js';
import { PublicOnlyGuard } from './auth/public-only.guard.js';
import { AllExceptionsFilter } from './common/all-exceptions.filter.js';
import { loggerOptions } from './config/logger.options.js';
import { AppValidationPipe } from './common/validation.js';
import { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { CryptoModule } from './crypto/crypto.module.js';
import { DatabaseModule } from './database/database.module.js';
import { HealthModule } from './health/health.module.js';
import { PhoneNumbersModule } from './phone-numbers/phone-numbers.module.js';
import { PlatformModule } from './platform/platform.module.js';
import { MediaModule } from './media/media.module.js';
import { MessagesApiModule } from './messages/messages-api.module.js';
import { MessagesModule } from './messages/messages.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { RedisModule } from './redis/redis.module.js';
import { SendApiModule } from './send/send-api.module.js';
import { SendWorkerModule } from './send/send-worker.module.js';
import { BufferModule } from './turns/buffer/buffer.module.js';
import { ContactsApiModule } from './contacts/contacts-api.module.js';
import { ConversationsApiModule } from './conversations/conversations-api.module.js';
import { LiveApiModule } from './live/live-api.module.js';
import { OverviewApiModule } from './overview/overview-api.module.js';
import { EventsApiModule } from './events/events-api.module.js';
import { EventsWorkerModule } from './events/events-worker.module.js';
import { TurnsApiModule } from './turns/turns-api.module.js';
import { TurnsWorkerModule } from './turns/turns-worker.module.js';
import { WebhookWorkerModule } from './webhook/webhook-worker.module.js';
import { WebhookApiModule } from './webhook/webhook-api.module.js';
import { CampaignsApiModule } from './campaigns/campaigns-api.module.js';
import { CampaignsWorkerModule } from './campaigns/campaigns-worker.module.js';
import { TemplatesApiModule } from './templates/templates-api.module.js';
import { TemplatesWorkerModule } from './templates/templates-worker.module.js';

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
        PhoneNumbersModule,
        AdminModule,
        MessagesApiModule,
        SendApiModule,
        MediaModule,
        WebhookApiModule,
        TurnsApiModule,
        EventsApiModule,
        ContactsApiModule.register(BufferModule, MessagesModule),
        ConversationsApiModule,
        LiveApiModule,
        OverviewApiModule,
        TemplatesApiModule,
        CampaignsApiModule,
      );
    }
    if (config.runsWorkers) {
      imports.push(
        TurnsWorkerModule,
        WebhookWorkerModule,
        SendWorkerModule,
        EventsWorkerModule,
        TemplatesWorkerModule,
        CampaignsWorkerModule,
      );
    }
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
