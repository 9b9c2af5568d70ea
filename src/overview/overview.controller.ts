import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminAuth } from '../auth/auth.decorators.js';
import { OverviewDto } from './dto/overview.dto.js';
import { OverviewService } from './overview.service.js';

@ApiTags('admin: overview')
@AdminAuth()
@Controller('admin/overview')
export class OverviewController {
  constructor(private readonly overview: OverviewService) {}

  @Get()
  @ApiOperation({
    operationId: 'getOverview',
    summary: 'The health of the dependencies and what is waiting (the console’s first admin page)',
  })
  @ApiOkResponse({ type: OverviewDto })
  get(): Promise<OverviewDto> {
    return this.overview.overview();
  }
}
