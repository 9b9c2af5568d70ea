import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppException } from '../common/app.exception.js';
import { AppConfig } from '../config/app-config.js';
import { CryptoService } from '../crypto/crypto.service.js';
import { InstancesService } from '../instances/instances.service.js';
import {
  CreatedEventSubscriptionDto,
  EventDeliveryDto,
  EventSubscriptionDto,
  type CreateEventSubscriptionDto,
  type EventDeliveryPageDto,
  type ListEventDeliveriesQueryDto,
  type ReplayEventsDto,
  type ReplayResultDto,
  type RotatedSecretDto,
  type TestEventResultDto,
  type UpdateEventSubscriptionDto,
} from './dto/event-subscription.dto.js';
import { newSigningSecret } from './event-signature.js';
import { EventStore } from './event.store.js';
import type { EventSubscription } from './event.types.js';
import { TargetGuard } from '../outbound/target-guard.js';

const DEFAULT_PAGE = 20;

/** Most events one replay queues. */
export const REPLAY_MAX = 100_000;

/** Another replay of the subscription holds its lock. */
export function replayRunning(id: string): AppException {
  return new AppException(
    'event_replay_running',
    `A replay of event subscription ${id} is running; send this one once it has answered`,
  );
}

/** PostgreSQL cancelled the replay at EVENT_REPLAY_TIMEOUT_MS and rolled it back. */
export function replayTimedOut(timeoutMs: number): AppException {
  return new AppException(
    'event_replay_timeout',
    `The replay did not finish within EVENT_REPLAY_TIMEOUT_MS (${timeoutMs} ms) and was ` +
      'rolled back: nothing was queued. Replay a shorter range (since, until)',
  );
}

function decodeCursor(value: string): string {
  const seq = Buffer.from(value, 'base64url').toString('utf8');
  if (/^\d{1,18}$/.test(seq)) return seq;
  throw AppException.validation([
    { field: 'cursor', message: 'must be a cursor from next_cursor' },
  ]);
}

/** What an admin does with event subscriptions and their deliveries. */
@Injectable()
export class EventSubscriptionsService {
  constructor(
    private readonly store: EventStore,
    private readonly crypto: CryptoService,
    private readonly guard: TargetGuard,
    private readonly instances: InstancesService,
    private readonly config: AppConfig,
  ) {}

  async create(dto: CreateEventSubscriptionDto): Promise<CreatedEventSubscriptionDto> {
    const instanceId = dto.instance_id ?? null;
    if (instanceId) await this.instances.get(instanceId);
    await this.assertTarget(dto.url);
    if ((await this.store.countFor(instanceId)) >= this.config.EVENT_SUBSCRIPTIONS_MAX) {
      throw new AppException(
        'event_subscription_limit',
        `${instanceId ? `Instance ${instanceId}` : 'The all-instances scope'} has ` +
          `${this.config.EVENT_SUBSCRIPTIONS_MAX} event subscriptions already (EVENT_SUBSCRIPTIONS_MAX)`,
      );
    }
    const id = randomUUID();
    const secret = newSigningSecret();
    const subscription = await this.store.insertSubscription({
      id,
      url: dto.url,
      instance_id: instanceId,
      event_types: dto.event_types,
      description: dto.description ?? null,
      enabled: dto.enabled ?? true,
      secret_encrypted: this.crypto.encrypt(secret, id),
    });
    return { ...EventSubscriptionDto.from(subscription), secret };
  }

  /** 422 event_target_refused unless the URL may receive events (TargetGuard). */
  private async assertTarget(url: string): Promise<void> {
    const why = await this.guard.urlRefusal(url);
    if (why) throw new AppException('event_target_refused', `url is refused: ${why}`);
  }

  async list(instanceId?: string): Promise<EventSubscriptionDto[]> {
    return (await this.store.list(instanceId)).map((row) => EventSubscriptionDto.from(row));
  }

  async get(id: string): Promise<EventSubscriptionDto> {
    return EventSubscriptionDto.from(await this.find(id));
  }

  async update(id: string, dto: UpdateEventSubscriptionDto): Promise<EventSubscriptionDto> {
    await this.find(id);
    if (dto.url !== undefined) await this.assertTarget(dto.url);
    const updated = await this.store.update(id, {
      url: dto.url,
      event_types: dto.event_types,
      description: dto.description,
      enabled: dto.enabled,
    });
    if (!updated) throw notFound(id);
    return EventSubscriptionDto.from(updated);
  }

  /** A new secret; the current one keeps signing too for EVENT_SECRET_GRACE_S. */
  async rotateSecret(id: string): Promise<RotatedSecretDto> {
    const current = await this.find(id);
    const secret = newSigningSecret();
    const grace = this.config.EVENT_SECRET_GRACE_S;
    const until = grace > 0 ? new Date(Date.now() + grace * 1000) : null;
    const updated = await this.store.update(id, {
      secret_encrypted: this.crypto.encrypt(secret, id),
      previous_secret_encrypted: until ? current.secret_encrypted : undefined,
      previous_secret_until: until ?? new Date(0),
    });
    if (!updated) throw notFound(id);
    return { secret, previous_secret_expires_at: until?.toISOString() ?? null };
  }

  async remove(id: string): Promise<void> {
    if (!(await this.store.delete(id))) throw notFound(id);
  }

  async deliveries(id: string, query: ListEventDeliveriesQueryDto): Promise<EventDeliveryPageDto> {
    await this.find(id);
    const limit = query.limit ?? DEFAULT_PAGE;
    const before = query.cursor === undefined ? null : decodeCursor(query.cursor);
    const page = await this.store.listDeliveries(id, before, query.state, limit + 1);
    const data = page.slice(0, limit);
    return {
      data: data.map((row) => EventDeliveryDto.from(row)),
      next_cursor:
        page.length > limit ? Buffer.from(data[data.length - 1].seq).toString('base64url') : null,
    };
  }

  async retryDelivery(id: string): Promise<EventDeliveryDto> {
    if (!(await this.store.retryDelivery(id))) throw deliveryNotFound(id);
    const row = await this.store.findDelivery(id);
    if (!row) throw deliveryNotFound(id);
    return EventDeliveryDto.from(row);
  }

  async replay(id: string, dto: ReplayEventsDto): Promise<ReplayResultDto> {
    const subscription = await this.find(id);
    const since = new Date(dto.since);
    const until = dto.until ? new Date(dto.until) : new Date();
    if (until <= since) {
      throw AppException.validation([{ field: 'until', message: 'must be after since' }]);
    }
    const timeoutMs = this.config.EVENT_REPLAY_TIMEOUT_MS;
    const outcome = await this.store.replay(subscription, since, until, REPLAY_MAX, timeoutMs);
    if (outcome.kind === 'running') throw replayRunning(id);
    if (outcome.kind === 'timed_out') throw replayTimedOut(timeoutMs);
    return { queued: outcome.queued };
  }

  async test(id: string): Promise<TestEventResultDto> {
    return this.store.ping(await this.find(id));
  }

  private async find(id: string): Promise<EventSubscription> {
    const subscription = await this.store.find(id);
    if (!subscription) throw notFound(id);
    return subscription;
  }
}

function notFound(id: string): AppException {
  return new AppException('event_subscription_not_found', `Event subscription ${id} not found`);
}

function deliveryNotFound(id: string): AppException {
  return new AppException('event_delivery_not_found', `Event delivery ${id} not found`);
}
