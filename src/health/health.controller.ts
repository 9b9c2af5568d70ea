import { Controller, Get, Res } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public } from '../auth/auth.decorators.js';
import { AppConfig } from '../config/app-config.js';
import { SERVICE_NAME, SERVICE_VERSION } from '../config/service-info.js';
import { HealthReportDto, LivenessDto, ReadinessDto } from './dto/health.dto.js';
import { HealthService } from './health.service.js';

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthService,
    private readonly config: AppConfig,
  ) {}

  /** Always 200: a degraded service still answers. */
  @Get()
  @ApiOperation({
    operationId: 'getHealth',
    summary: 'Service health and its dependencies (always 200)',
  })
  @ApiOkResponse({ type: HealthReportDto })
  async report(): Promise<HealthReportDto> {
    const dependencies = await this.health.dependencies();
    const degraded = Object.values(dependencies).some((state) => state !== 'healthy');
    return {
      service: SERVICE_NAME,
      version: SERVICE_VERSION,
      status: degraded ? 'degraded' : 'healthy',
      dependencies,
    };
  }

  @Get('live')
  @ApiOperation({ operationId: 'getLiveness', summary: 'Liveness probe: no checks' })
  @ApiOkResponse({ type: LivenessDto })
  live(): LivenessDto {
    return { status: 'ok' };
  }

  /**
   * Ready when this process can do its work: PostgreSQL and Redis answer.
   * The platform's reachability is reported but does not take the process
   * out of rotation: no other replica would reach it better, and webhook
   * deliveries must keep being acknowledged meanwhile.
   */
  @Get('ready')
  @ApiOperation({
    operationId: 'getReadiness',
    summary: 'Readiness probe: PostgreSQL and Redis answer',
  })
  @ApiOkResponse({ type: ReadinessDto })
  @ApiServiceUnavailableResponse({
    type: ReadinessDto,
    description:
      'not_ready: PostgreSQL or Redis does not answer (at start too: the process waits for them), or the process is still booting',
  })
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<ReadinessDto> {
    const dependencies = await this.health.dependencies();
    const ready = dependencies.database === 'healthy' && dependencies.cache === 'healthy';
    if (!ready) void reply.status(this.config.READINESS_NOT_READY_STATUS);
    return { status: ready ? 'ready' : 'not_ready', ...dependencies };
  }
}
