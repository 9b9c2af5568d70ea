import { Injectable, Logger } from '@nestjs/common';
import { AppException } from '../common/app.exception.js';
import type { ListTurnsQueryDto } from './dto/turn.dto.js';
import { TurnDto, type TurnPageDto } from './dto/turn.dto.js';
import { TurnScheduler } from './turn-scheduler.js';
import { decodeCursor, encodeCursor } from '../common/time-id-cursor.js';
import { TurnStore } from './turn.store.js';

const DEFAULT_PAGE = 20;

/** What an operator does with turns: list them, read one, run a failed one again. */
@Injectable()
export class TurnsService {
  private readonly logger = new Logger(TurnsService.name);

  constructor(
    private readonly turns: TurnStore,
    private readonly scheduler: TurnScheduler,
  ) {}

  async list(query: ListTurnsQueryDto): Promise<TurnPageDto> {
    const limit = query.limit ?? DEFAULT_PAGE;
    const page = await this.turns.list(
      { status: query.status, instanceId: query.instance_id, contact: query.contact },
      query.cursor === undefined ? undefined : decodeCursor(query.cursor),
      limit,
    );
    const ids = page.turns.map((turn) => turn.id);
    const [messageIds, parts] = await Promise.all([
      this.turns.messageIds(ids),
      this.turns.parts(ids),
    ]);
    const last = page.turns.at(-1);
    return {
      data: page.turns.map((turn) =>
        TurnDto.from(turn, messageIds.get(turn.id) ?? [], parts.get(turn.id) ?? []),
      ),
      next_cursor: page.hasMore && last ? encodeCursor(last.cursor) : null,
    };
  }

  async get(id: string): Promise<TurnDto> {
    const turn = await this.turns.get(id);
    if (!turn) throw new AppException('turn_not_found', `Turn ${id} not found`);
    const [messageIds, parts] = await Promise.all([
      this.turns.messageIds([id]),
      this.turns.parts([id]),
    ]);
    return TurnDto.from(turn, messageIds.get(id) ?? [], parts.get(id) ?? []);
  }

  /** Runs a failed turn again: same messages, same batch_id; its failed parts are queued again. */
  async retry(id: string): Promise<TurnDto> {
    const reopened = await this.turns.reopen(id);
    if (reopened.kind === 'not_failed') {
      const turn = await this.turns.get(id);
      if (!turn) throw new AppException('turn_not_found', `Turn ${id} not found`);
      throw new AppException(
        'turn_not_retryable',
        `Turn ${id} is ${turn.status}: only a failed turn can be retried`,
      );
    }
    if (reopened.kind === 'busy') {
      throw new AppException(
        'turn_not_retryable',
        `The contact has a turn in progress (${reopened.turnId}); retry once it has ended`,
      );
    }
    this.logger.log({ turnId: id }, 'failed turn retried by an operator');
    // If Redis is away the sweeper resumes it from PostgreSQL.
    await this.scheduler.wake(id).catch(() => undefined);
    return this.get(id);
  }
}
