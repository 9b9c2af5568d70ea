import { ApiProperty } from '@nestjs/swagger';
import { DependenciesDto } from '../../health/dto/health.dto.js';

export class BacklogDto {
  @ApiProperty({ example: 3 }) count: number;
  @ApiProperty({ description: 'Age in seconds of the oldest (0 when none)', example: 4.2 })
  oldest_age_s: number;
}

export class OverviewInstancesDto {
  @ApiProperty() total: number;
  @ApiProperty() active: number;
  @ApiProperty({ description: 'Whose access token the platform refused: set a new one' })
  token_rejected: number;
}

/** What an admin looks at first: is everything answering, and is anything piling up. */
export class OverviewDto {
  @ApiProperty({ type: DependenciesDto, description: 'PostgreSQL, Redis and the platform' })
  health: DependenciesDto;
  @ApiProperty({ type: OverviewInstancesDto }) instances: OverviewInstancesDto;
  @ApiProperty({ type: BacklogDto, description: "Customers' messages waiting for the agent" })
  messages_waiting: BacklogDto;
  @ApiProperty({
    type: BacklogDto,
    description:
      'Event deliveries still to be made to enabled subscriptions, with their oldest event’s age',
  })
  events_undelivered: BacklogDto;
  @ApiProperty({ description: 'Messages sent in the last hour (agent, API and people)' })
  sends_last_hour: number;
  @ApiProperty({ description: 'Failed turns awaiting an admin (see /admin/turns)' })
  failed_turns: number;
}
