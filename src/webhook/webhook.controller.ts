import { Controller, Get, Headers, HttpCode, Post, Query, Req, Res } from '@nestjs/common';
import type { RawBodyRequest } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import {
  ApiBody,
  ApiExtension,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiErrors } from '../common/api-errors.js';
import { AppException } from '../common/app.exception.js';
import { RAW_BODY_EXTENSION, type RouteLimits } from '../common/route-limits.js';
import { Public } from '../auth/auth.decorators.js';
import { WebhookService } from './webhook.service.js';

/** The platform sends up to 3 MB (1,000 updates) in one delivery. */
export const WEBHOOK_BODY_LIMIT_BYTES = 5 * 1024 * 1024;

/**
 * A refused delivery is read and discarded up to this size, so the platform (which
 * writes the whole body before it reads) sees the 413: the limit and 2 MB.
 */
export const WEBHOOK_REFUSED_DISCARD_BYTES = WEBHOOK_BODY_LIMIT_BYTES + 2 * 1024 * 1024;

export class WebhookAckDto {
  @ApiProperty({ example: 'ok' }) status: 'ok';
}

@ApiTags('webhook')
@Public()
@Controller('webhooks/messenger')
export class WebhookController {
  constructor(private readonly webhook: WebhookService) {}

  @Get()
  @ApiOperation({
    operationId: 'verifyWebhook',
    summary: "The platform's subscription check",
    description:
      'Answers hub.challenge when hub.mode is subscribe and hub.verify_token is ' +
      "PLATFORM_VERIFY_TOKEN or an instance's webhook_verify_token.",
  })
  @ApiQuery({ name: 'hub.mode', required: true, schema: { type: 'string', enum: ['subscribe'] } })
  @ApiQuery({ name: 'hub.verify_token', required: true, schema: { type: 'string' } })
  @ApiQuery({
    name: 'hub.challenge',
    required: true,
    schema: { type: 'string', example: '1158201444' },
  })
  @ApiOkResponse({
    description: 'The hub.challenge, as plain text',
    content: { 'text/plain': { schema: { type: 'string', example: '1158201444' } } },
  })
  @ApiErrors(new AppException('invalid_verify_token', 'The verify token does not match'))
  async verify(@Query() query: Record<string, unknown>, @Res() reply: FastifyReply): Promise<void> {
    const challenge = await this.webhook.challenge(
      query['hub.mode'],
      query['hub.verify_token'],
      query['hub.challenge'],
    );
    await reply.type('text/plain; charset=utf-8').send(challenge);
  }

  @Post()
  // Only the signature over the bytes matters here (workers parse them), and
  // the platform is no browser: no parse, no security headers.
  @RouteConfig({
    bodyLimit: WEBHOOK_BODY_LIMIT_BYTES,
    refusedBodyDiscard: WEBHOOK_REFUSED_DISCARD_BYTES,
    rawBodyOnly: true,
    helmet: { skipRoute: true },
  } satisfies RouteLimits)
  @HttpCode(200)
  @ApiOperation({
    operationId: 'receiveWebhook',
    summary: "The platform's deliveries: messages, statuses, template events",
    description:
      'Acknowledged once stored in Redis; the workers process it. Up to 5 MB: a larger body ' +
      'is answered 413 after the rest of it is read and discarded (up to 7 MB, for 10 s ' +
      'at most; beyond that the connection is closed), so the sender reads the answer.',
  })
  @ApiHeader({
    name: 'x-hub-signature-256',
    required: true,
    description: 'sha256=<HMAC-SHA256 of the raw body with PLATFORM_APP_SECRET>',
  })
  @ApiBody({
    description: "The platform's webhook envelope, as it sends it",
    schema: { type: 'object', additionalProperties: true },
  })
  @ApiExtension(RAW_BODY_EXTENSION, true)
  @ApiOkResponse({ type: WebhookAckDto })
  @ApiErrors(
    new AppException('invalid_signature', 'Missing or invalid x-hub-signature-256'),
    {
      error: new AppException(
        'payload_too_large',
        "The request body is over this route's limit of 5 MB",
      ),
      summary: 'a delivery over 5 MB',
    },
    {
      error: new AppException(
        'unavailable',
        'The delivery could not be stored; retry later',
        undefined,
        { 'retry-after': '5' },
      ),
      summary: 'Redis cannot take the delivery: the platform delivers it again',
    },
  )
  async receive(
    @Req() request: RawBodyRequest<FastifyRequest>,
    @Headers('x-hub-signature-256') signature: string | undefined,
  ): Promise<WebhookAckDto> {
    await this.webhook.accept(request.rawBody, signature);
    return { status: 'ok' };
  }
}
