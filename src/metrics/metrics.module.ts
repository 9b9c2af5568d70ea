import { Global, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller.js';
import { PLATFORM_CALL_OBSERVER } from '../platform/platform-call-observer.js';
import { MetricsService } from './metrics.service.js';

@Global()
@Module({
  controllers: [MetricsController],
  providers: [MetricsService, { provide: PLATFORM_CALL_OBSERVER, useExisting: MetricsService }],
  exports: [MetricsService, PLATFORM_CALL_OBSERVER],
})
export class MetricsModule {}
