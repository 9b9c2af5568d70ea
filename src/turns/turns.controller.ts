import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { BAD_CURSOR } from '../common/time-id-cursor.js';
import { ApiErrors, EXAMPLE_ID, invalidRequest, thrownBy } from '../common/api-errors.js';
import { AppException } from '../common/app.exception.js';
import { ParseUuidPipe } from '../common/parse-uuid.pipe.js';
import { AdminAuth } from '../auth/auth.decorators.js';
import { ListTurnsQueryDto, TurnDto, TurnPageDto } from './dto/turn.dto.js';
import { TurnsService } from './turns.service.js';

const BAD_ID = thrownBy(
  () => new ParseUuidPipe().transform('42', { type: 'param', data: 'id' }),
  'id is not a UUID',
);
const NOT_FOUND = new AppException('turn_not_found', `Turn ${EXAMPLE_ID} not found`);

@ApiTags('admin: turns')
@AdminAuth()
@Controller('admin/turns')
export class TurnsController {
  constructor(private readonly turns: TurnsService) {}

  @Get()
  @ApiOperation({
    operationId: 'listTurns',
    summary: 'List turns, newest first (failed ones are the dead letters)',
  })
  @ApiOkResponse({ type: TurnPageDto })
  @ApiErrors(invalidRequest(ListTurnsQueryDto, { limit: '500' }, 'limit over 100'), BAD_CURSOR)
  list(@Query() query: ListTurnsQueryDto): Promise<TurnPageDto> {
    return this.turns.list(query);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getTurn', summary: 'One turn, with its messages and reply parts' })
  @ApiOkResponse({ type: TurnDto })
  @ApiErrors(BAD_ID, NOT_FOUND)
  get(@Param('id', ParseUuidPipe) id: string): Promise<TurnDto> {
    return this.turns.get(id);
  }

  @Post(':id/retry')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'retryTurn',
    summary: 'Run a failed turn again',
    description:
      'Same messages, same batch_id. Without an answer the agent is called again; with one, ' +
      'its failed parts are sent again (sent and uncertain parts are not).',
  })
  @ApiOkResponse({ type: TurnDto })
  @ApiErrors(
    BAD_ID,
    NOT_FOUND,
    new AppException(
      'turn_not_retryable',
      `Turn ${EXAMPLE_ID} is done: only a failed turn can be retried`,
    ),
  )
  retry(@Param('id', ParseUuidPipe) id: string): Promise<TurnDto> {
    return this.turns.retry(id);
  }
}
