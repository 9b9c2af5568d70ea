import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { AdminAuth } from '../auth/auth.decorators.js';
import { ApiErrors, EXAMPLE_ID, invalidRequest, thrownBy } from '../common/api-errors.js';
import { AppException } from '../common/app.exception.js';
import { InstanceScopedDto } from '../common/instance-scoped.dto.js';
import { ParseUuidPipe } from '../common/parse-uuid.pipe.js';
import { SuccessMessageDto } from '../instances/dto/instance-responses.dto.js';
import {
  CreateEventSubscriptionDto,
  CreatedEventSubscriptionDto,
  EventDeliveryDto,
  EventDeliveryPageDto,
  EventSubscriptionDto,
  ListEventDeliveriesQueryDto,
  ReplayEventsDto,
  ReplayResultDto,
  RotatedSecretDto,
  TestEventResultDto,
  UpdateEventSubscriptionDto,
} from './dto/event-subscription.dto.js';
import {
  EventSubscriptionsService,
  replayRunning,
  replayTimedOut,
} from './event-subscriptions.service.js';

const BAD_ID = thrownBy(
  () => new ParseUuidPipe().transform('42', { type: 'param', data: 'id' }),
  'id is not a UUID',
);
const NOT_FOUND = new AppException(
  'event_subscription_not_found',
  `Event subscription ${EXAMPLE_ID} not found`,
);
const REFUSED = new AppException(
  'event_target_refused',
  'url is refused: 10.0.0.7 resolves to a private address 10.0.0.7',
);

const DELIVERY_DESCRIPTION =
  'Each event is POSTed as JSON (see EventDto) with the Standard Webhooks headers ' +
  '`webhook-id` (the event id, the same on every retry), `webhook-timestamp` and ' +
  '`webhook-signature` (`v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under the secret). ' +
  'A 2xx within EVENT_TIMEOUT_MS is success; anything else is retried on EVENT_RETRY_SCHEDULE_S ' +
  "(about 3 days), honouring Retry-After on 429 and 503. A contact's events arrive in order.";

@ApiTags('admin: event subscriptions')
@AdminAuth()
@Controller('admin')
export class EventSubscriptionsController {
  constructor(private readonly subscriptions: EventSubscriptionsService) {}

  @Post('event-subscriptions')
  @ApiOperation({
    operationId: 'createEventSubscription',
    summary: 'Subscribe a URL to events',
    description: `The signing secret is in this answer only. ${DELIVERY_DESCRIPTION}`,
  })
  @ApiCreatedResponse({ type: CreatedEventSubscriptionDto })
  @ApiErrors(
    invalidRequest(
      CreateEventSubscriptionDto,
      { url: 'https://crm.example.com/hooks', event_types: ['message.seen'] },
      'an unknown event type',
    ),
    REFUSED,
    new AppException('instance_not_found', `Instance ${EXAMPLE_ID} not found`),
    new AppException(
      'event_subscription_limit',
      `Instance ${EXAMPLE_ID} has 10 event subscriptions already (EVENT_SUBSCRIPTIONS_MAX)`,
    ),
  )
  create(@Body() dto: CreateEventSubscriptionDto): Promise<CreatedEventSubscriptionDto> {
    return this.subscriptions.create(dto);
  }

  @Get('event-subscriptions')
  @ApiOperation({
    operationId: 'listEventSubscriptions',
    summary: 'List event subscriptions (never their secrets)',
  })
  @ApiOkResponse({ type: [EventSubscriptionDto] })
  @ApiErrors(invalidRequest(InstanceScopedDto, { instance_id: '42' }, 'instance_id is not a UUID'))
  list(@Query() query: InstanceScopedDto): Promise<EventSubscriptionDto[]> {
    return this.subscriptions.list(query.instance_id);
  }

  @Get('event-subscriptions/:id')
  @ApiOperation({ operationId: 'getEventSubscription', summary: 'One event subscription' })
  @ApiOkResponse({ type: EventSubscriptionDto })
  @ApiErrors(BAD_ID, NOT_FOUND)
  get(@Param('id', ParseUuidPipe) id: string): Promise<EventSubscriptionDto> {
    return this.subscriptions.get(id);
  }

  @Patch('event-subscriptions/:id')
  @ApiOperation({
    operationId: 'updateEventSubscription',
    summary: 'Change an event subscription, or disable and enable it',
  })
  @ApiOkResponse({ type: EventSubscriptionDto })
  @ApiErrors(
    BAD_ID,
    invalidRequest(UpdateEventSubscriptionDto, { enabled: 'yes' }, 'enabled is not a boolean'),
    REFUSED,
    NOT_FOUND,
  )
  update(
    @Param('id', ParseUuidPipe) id: string,
    @Body() dto: UpdateEventSubscriptionDto,
  ): Promise<EventSubscriptionDto> {
    return this.subscriptions.update(id, dto);
  }

  @Delete('event-subscriptions/:id')
  @ApiOperation({
    operationId: 'deleteEventSubscription',
    summary: 'Delete an event subscription and its delivery records',
  })
  @ApiOkResponse({ type: SuccessMessageDto })
  @ApiErrors(BAD_ID, NOT_FOUND)
  async remove(@Param('id', ParseUuidPipe) id: string): Promise<SuccessMessageDto> {
    await this.subscriptions.remove(id);
    return { success: true, message: `Event subscription ${id} deleted` };
  }

  @Post('event-subscriptions/:id/rotate-secret')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'rotateEventSubscriptionSecret',
    summary: 'Replace the signing secret',
    description:
      'The new secret is in this answer only. For EVENT_SECRET_GRACE_S deliveries carry two ' +
      'signatures (new and previous), so receivers can switch without losing an event.',
  })
  @ApiOkResponse({ type: RotatedSecretDto })
  @ApiErrors(BAD_ID, NOT_FOUND)
  rotate(@Param('id', ParseUuidPipe) id: string): Promise<RotatedSecretDto> {
    return this.subscriptions.rotateSecret(id);
  }

  @Get('event-subscriptions/:id/deliveries')
  @ApiOperation({
    operationId: 'listEventDeliveries',
    summary: "A subscription's deliveries, newest first",
  })
  @ApiOkResponse({ type: EventDeliveryPageDto })
  @ApiErrors(
    BAD_ID,
    invalidRequest(ListEventDeliveriesQueryDto, { state: 'lost' }, 'an unknown state'),
    NOT_FOUND,
  )
  deliveries(
    @Param('id', ParseUuidPipe) id: string,
    @Query() query: ListEventDeliveriesQueryDto,
  ): Promise<EventDeliveryPageDto> {
    return this.subscriptions.deliveries(id, query);
  }

  @Post('event-subscriptions/:id/replay')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'replayEvents',
    summary: 'Send again the events of a time range',
    description:
      'Every event created in [since, until) that the subscription takes (its instance and ' +
      'types) is queued for it again, with its original id, whether it was delivered or not, ' +
      'except an event still pending for it (it goes out anyway, once). ' +
      'One replay of a subscription runs at a time (409 while one does), and one running ' +
      'longer than EVENT_REPLAY_TIMEOUT_MS is rolled back (422, nothing queued). ' +
      'Events are recorded only while some subscription (enabled or disabled) wants them, ' +
      'and kept EVENT_RETENTION_DAYS.',
  })
  @ApiAcceptedResponse({ type: ReplayResultDto })
  @ApiErrors(
    BAD_ID,
    invalidRequest(ReplayEventsDto, { since: 'yesterday' }, 'since is not a date-time'),
    NOT_FOUND,
    { error: replayRunning(EXAMPLE_ID), summary: 'a replay of this subscription is running' },
    { error: replayTimedOut(10000), summary: 'the replay ran past EVENT_REPLAY_TIMEOUT_MS' },
  )
  replay(
    @Param('id', ParseUuidPipe) id: string,
    @Body() dto: ReplayEventsDto,
  ): Promise<ReplayResultDto> {
    return this.subscriptions.replay(id, dto);
  }

  @Post('event-subscriptions/:id/test')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'testEventSubscription',
    summary: 'Send a ping event',
    description: 'Delivered like any event, even to a disabled subscription once enabled.',
  })
  @ApiAcceptedResponse({ type: TestEventResultDto })
  @ApiErrors(BAD_ID, NOT_FOUND)
  test(@Param('id', ParseUuidPipe) id: string): Promise<TestEventResultDto> {
    return this.subscriptions.test(id);
  }

  @Post('event-deliveries/:id/retry')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'retryEventDelivery',
    summary: 'Send a delivery again now',
    description:
      'A failed delivery starts its retry schedule over; a pending one is tried without ' +
      'waiting for its next attempt; a delivered one is sent once more. It still goes after ' +
      "the contact's earlier events.",
  })
  @ApiOkResponse({ type: EventDeliveryDto })
  @ApiErrors(
    BAD_ID,
    new AppException('event_delivery_not_found', `Event delivery ${EXAMPLE_ID} not found`),
  )
  retry(@Param('id', ParseUuidPipe) id: string): Promise<EventDeliveryDto> {
    return this.subscriptions.retryDelivery(id);
  }
}
