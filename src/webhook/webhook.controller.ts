import { Controller, Get, Headers, HttpCode, Post, Query, Req, Res } from '@nestjs/common';
import type { RawBodyRequest } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiOkResponse, ApiProduces, ApiProperty, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RouteLimits } from '../common/route-limits.js';
import { Public } from '../auth/auth.decorators.js';
import { WebhookService } from './webhook.service.js';

/** The platform sends up to 3 MB (1,000 updates) in one delivery. */
export const WEBHOOK_BODY_LIMIT_BYTES = 5 * 1024 * 1024;

export class WebhookAckDto {
  @ApiProperty({ example: 'ok' }) status: 'ok';
}

@ApiTags('webhook')
@Public()
@Controller('webhooks/messenger')
export class WebhookController {
  constructor(private readonly webhook: WebhookService) {}

  @Get()
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'The hub.challenge, as plain text' })
  async verify(@Query() query: Record<string, unknown>, @Res() reply: FastifyReply): Promise<void> {
    const challenge = await this.webhook.challenge(
      query['hub.mode'],
      query['hub.verify_token'],
      query['hub.challenge'],
    );
    await reply.type('text/plain; charset=utf-8').send(challenge);
  }

  @Post()
  @RouteConfig({ bodyLimit: WEBHOOK_BODY_LIMIT_BYTES } satisfies RouteLimits)
  @HttpCode(200)
  @ApiOkResponse({ type: WebhookAckDto })
  async receive(
    @Req() request: RawBodyRequest<FastifyRequest>,
    @Headers('x-hub-signature-256') signature: string | undefined,
  ): Promise<WebhookAckDto> {
    await this.webhook.accept(request.rawBody, signature);
    return { status: 'ok' };
  }
}
