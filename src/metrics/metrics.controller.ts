import { Controller, Get, Headers, Res } from '@nestjs/common';
import { ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AppException } from '../common/app.exception.js';
import { sameSecret } from '../common/secrets.js';
import { Public } from '../auth/auth.decorators.js';
import { AppConfig } from '../config/app-config.js';
import { MetricsService } from './metrics.service.js';

/** Prometheus text format; with METRICS_TOKEN set, only for `Authorization: Bearer <token>`. */
@ApiTags('operations')
@Public()
@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly metrics: MetricsService,
    private readonly config: AppConfig,
  ) {}

  @Get()
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus text exposition format' })
  async scrape(
    @Headers('authorization') authorization: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const expected = this.config.METRICS_TOKEN;
    if (expected && !sameSecret(authorization ?? '', `Bearer ${expected}`)) {
      throw new AppException('unauthorized', 'Missing or wrong metrics token');
    }
    await reply.type(this.metrics.registry.contentType).send(await this.metrics.registry.metrics());
  }
}
