import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ParseUuidPipe } from '../common/parse-uuid.pipe.js';
import { AdminAuth } from '../auth/auth.decorators.js';
import { ListTurnsQueryDto, TurnDto, TurnPageDto } from './dto/turn.dto.js';
import { TurnsService } from './turns.service.js';

@ApiTags('admin: turns')
@AdminAuth()
@Controller('admin/turns')
export class TurnsController {
  constructor(private readonly turns: TurnsService) {}

  @Get()
  @ApiOperation({ summary: 'List turns, newest first (failed ones are the dead letters)' })
  @ApiOkResponse({ type: TurnPageDto })
  list(@Query() query: ListTurnsQueryDto): Promise<TurnPageDto> {
    return this.turns.list(query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One turn, with its messages and reply parts' })
  @ApiOkResponse({ type: TurnDto })
  get(@Param('id', ParseUuidPipe) id: string): Promise<TurnDto> {
    return this.turns.get(id);
  }

  @Post(':id/retry')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Run a failed turn again',
    description:
      'Same messages, same batch_id. Without an answer the agent is called again; with one, ' +
      'its failed parts are sent again (sent and uncertain parts are not).',
  })
  @ApiOkResponse({ type: TurnDto })
  retry(@Param('id', ParseUuidPipe) id: string): Promise<TurnDto> {
    return this.turns.retry(id);
  }
}
