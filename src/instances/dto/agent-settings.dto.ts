import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsNumber,
  IsString,
  IsUrl,
  Length,
  Max,
  Min,
  ValidateIf,
} from 'class-validator';
import type { Instance } from '../instance.types.js';

const DELAY_MESSAGE = 'must be a number of seconds from 0 to 3600, or null';
const set = (_: unknown, value: unknown) => value !== null && value !== undefined;

/** PATCH /admin/instances/{id} `agent`: this number's agent; null puts a setting back to the global one. */
export class UpdateAgentSettingsDto {
  @ApiPropertyOptional({ description: 'false: the agent never answers this number' })
  @ValidateIf((_, value) => value !== undefined)
  @IsBoolean({ message: 'must be true or false' })
  enabled?: boolean;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'https://agents.example.com/store-b',
    description:
      'Its own agent; null: AGENT_MODULE_URL. Guarded like event targets: https to a public ' +
      'address (http and private addresses only when in EVENT_TARGET_ALLOWLIST; loopback ' +
      'outside production), no user:password@; checked here and on every connection.',
  })
  @ValidateIf(set)
  @IsUrl(
    {
      protocols: ['http', 'https'],
      require_protocol: true,
      require_tld: false,
      disallow_auth: true,
    },
    { message: 'must be an http or https URL without user:password@, or null' },
  )
  url?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    writeOnly: true,
    description:
      "Its agent's bearer token, stored encrypted and never shown; null: AGENT_MODULE_TOKEN",
  })
  @ValidateIf(set)
  @IsString({ message: 'must be a string, or null' })
  @Length(1, 4096, { message: 'must be 1 to 4096 characters, or null' })
  token?: string | null;

  @ApiPropertyOptional({ type: Number, nullable: true, description: 'null: MESSAGE_BUFFER_DELAY' })
  @ValidateIf(set)
  @IsNumber({}, { message: DELAY_MESSAGE })
  @Min(0, { message: DELAY_MESSAGE })
  @Max(3600, { message: DELAY_MESSAGE })
  buffer_delay_s?: number | null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    description: 'null: MESSAGE_BUFFER_MAX_WAIT',
  })
  @ValidateIf(set)
  @IsNumber({}, { message: DELAY_MESSAGE })
  @Min(0, { message: DELAY_MESSAGE })
  @Max(3600, { message: DELAY_MESSAGE })
  buffer_max_wait_s?: number | null;

  @ApiPropertyOptional({
    type: Boolean,
    nullable: true,
    description: 'null: AGENT_TYPING_INDICATOR',
  })
  @ValidateIf(set)
  @IsBoolean({ message: 'must be true or false, or null' })
  typing_indicator?: boolean | null;
}

/** An instance's own agent settings (null: the global setting applies). */
export class AgentSettingsDto {
  @ApiProperty() enabled: boolean;
  @ApiProperty({ type: String, nullable: true }) url: string | null;
  @ApiProperty({ description: 'Whether it has a token of its own (never shown)' })
  token_set: boolean;
  @ApiProperty({ type: Number, nullable: true }) buffer_delay_s: number | null;
  @ApiProperty({ type: Number, nullable: true }) buffer_max_wait_s: number | null;
  @ApiProperty({ type: Boolean, nullable: true }) typing_indicator: boolean | null;

  static from(instance: Instance): AgentSettingsDto {
    return {
      enabled: instance.agent_enabled,
      url: instance.agent_url === null ? null : withoutCredentials(instance.agent_url),
      token_set: instance.agent_token_encrypted !== null,
      buffer_delay_s: instance.agent_buffer_delay_s,
      buffer_max_wait_s: instance.agent_buffer_max_wait_s,
      typing_indicator: instance.agent_typing_indicator,
    };
  }
}

/**
 * A URL as it may be shown: credentials saved before they were refused are
 * masked (such a URL is refused on connection as well).
 */
export function withoutCredentials(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (!parsed.username && !parsed.password) return url;
  parsed.username = 'redacted';
  parsed.password = '';
  return parsed.toString();
}
