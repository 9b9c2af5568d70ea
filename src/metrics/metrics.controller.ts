import { Controller, Get, Headers, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ApiErrors } from '../common/api-errors.js';
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
  @ApiOperation({
    operationId: 'getMetrics',
    summary: 'Prometheus metrics',
    description:
      'With METRICS_TOKEN set (required in production), only for Authorization: Bearer <METRICS_TOKEN>.',
  })
  @ApiOkResponse({
    description: 'Prometheus text exposition format',
    content: {
      'text/plain': {
        schema: { type: 'string' },
        example: '# HELP http_requests_total HTTP requests\n# TYPE http_requests_total counter\n',
      },
    },
  })
  @ApiErrors(new AppException('unauthorized', 'Missing or wrong metrics token'))
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
