import { AgentSettingsDto } from './agent-settings.dto.js';
import { ApiProperty } from '@nestjs/swagger';
import {
  numberRate,
  TOKEN_TYPES,
  type Instance,
  type InstanceStatus,
  type TokenType,
} from '../instance.types.js';

const STATUSES: InstanceStatus[] = ['connected', 'disconnected'];

/** POST /admin/instances answer. */
export class CreatedInstanceDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() phone_number_id: string;
  @ApiProperty() channel_account_id: string;
  @ApiProperty() is_active: boolean;
  @ApiProperty({ enum: STATUSES }) status: InstanceStatus;
  @ApiProperty({ format: 'date-time' }) created_at: string;

  static from(instance: Instance): CreatedInstanceDto {
    return {
      id: instance.id,
      name: instance.name,
      phone_number_id: instance.phone_number_id,
      channel_account_id: instance.channel_account_id,
      is_active: instance.is_active,
      status: instance.status,
      created_at: instance.created_at.toISOString(),
    };
  }
}

/** One element of GET /admin/instances. */
export class InstanceListItemDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() phone_number_id: string;
  @ApiProperty() channel_account_id: string;
  @ApiProperty({ nullable: true, type: String }) display_phone_number: string | null;
  @ApiProperty({ nullable: true, type: String }) verified_name: string | null;
  @ApiProperty({ nullable: true, type: String, example: 'GREEN' }) quality_rating: string | null;
  @ApiProperty({ nullable: true, type: String, example: 'TIER_1K' })
  messaging_limit_tier: string | null;
  @ApiProperty() is_active: boolean;
  @ApiProperty({ enum: STATUSES }) status: InstanceStatus;
  @ApiProperty({ enum: TOKEN_TYPES }) token_type: TokenType;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'When the platform refused the access token (code 190); null once a new one is set',
  })
  token_rejected_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;

  static from(instance: Instance): InstanceListItemDto {
    return {
      id: instance.id,
      name: instance.name,
      phone_number_id: instance.phone_number_id,
      channel_account_id: instance.channel_account_id,
      display_phone_number: instance.display_phone_number,
      verified_name: instance.verified_name,
      quality_rating: instance.quality_rating,
      messaging_limit_tier: instance.messaging_limit_tier,
      is_active: instance.is_active,
      status: instance.status,
      token_type: instance.token_type,
      token_rejected_at: instance.token_rejected_at?.toISOString() ?? null,
      created_at: instance.created_at.toISOString(),
      updated_at: instance.updated_at.toISOString(),
    };
  }
}

/** What the import of a number's history (shared with the phone app) came to. */
export class HistorySummaryDto {
  @ApiProperty({ type: 'integer', example: 12, description: 'Chunks imported' }) chunks: number;
  @ApiProperty({ type: 'integer', example: 1180, description: 'Messages imported' })
  messages: number;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 1,
    description:
      'The furthest phase the platform reported: 0 (day 0-1), 1 (day 1-90), 2 (day 90-180)',
  })
  phase: number | null;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 40,
    description: "That phase's progress, in percent, as the platform says",
  })
  progress: number | null;
}

/** GET /admin/instances/{id}: the list fields plus the detail-only ones. */
export class InstanceDetailDto extends InstanceListItemDto {
  @ApiProperty({ nullable: true, type: String }) business_id: string | null;
  @ApiProperty({ nullable: true, type: String }) platform_app_id: string | null;
  @ApiProperty({ description: 'Token the platform echoes when verifying the webhook' })
  webhook_verify_token: string;
  @ApiProperty({ type: AgentSettingsDto, description: "This number's own agent settings" })
  agent: AgentSettingsDto;
  @ApiProperty({
    type: 'integer',
    example: 80,
    description:
      'Messages a second this number is paced to: PLATFORM_SEND_RATE, or 1,000 once the platform says it upgraded the throughput; at most 20 while it is shared with the phone app',
  })
  send_rate: number;
  @ApiProperty({
    description:
      "The number is shared with the platform's phone app (coexistence: its echoes, history or contacts came), which the platform paces at 20 messages a second",
  })
  coexistence: boolean;
  @ApiProperty({
    description:
      "Campaigns of marketing templates go through the platform's marketing messages endpoint",
  })
  marketing_messages: boolean;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 2000,
    description:
      "The business's daily limit on customers it starts conversations with, as the platform's business_capability_update last said (null: none known); campaigns keep a share of it free for conversations (CAMPAIGN_DAILY_LIMIT_SHARE)",
  })
  daily_limit: number | null;
  @ApiProperty({ type: HistorySummaryDto, description: "Its history's import (coexistence)" })
  history: HistorySummaryDto;

  static override from(
    instance: Instance,
    defaultRate = 80,
    history: HistorySummaryDto = { chunks: 0, messages: 0, phase: null, progress: null },
  ): InstanceDetailDto {
    return {
      ...InstanceListItemDto.from(instance),
      send_rate: numberRate(instance, defaultRate) ?? defaultRate,
      coexistence: instance.coexistence,
      history,
      marketing_messages: instance.marketing_messages,
      daily_limit: instance.daily_limit,
      business_id: instance.business_id,
      platform_app_id: instance.platform_app_id,
      webhook_verify_token: instance.webhook_verify_token,
      agent: AgentSettingsDto.from(instance),
    };
  }
}

export class UpdatedInstanceDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class SuccessMessageDto {
  @ApiProperty() success: boolean;
  @ApiProperty() message: string;
}

export class InstanceStateDto {
  @ApiProperty() success: boolean;
  @ApiProperty({ enum: STATUSES }) status: InstanceStatus;
}

export class InstanceStatusItemDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() is_active: boolean;
  @ApiProperty({ enum: STATUSES }) status: InstanceStatus;
  @ApiProperty({ nullable: true, type: String }) quality_rating: string | null;
}

export class InstancesStatusDto {
  @ApiProperty() total: number;
  @ApiProperty() active: number;
  @ApiProperty() inactive: number;
  @ApiProperty({ type: [InstanceStatusItemDto] }) instances: InstanceStatusItemDto[];
}
