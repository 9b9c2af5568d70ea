import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type {
  PlatformCallObserver,
  PlatformCallOutcome,
} from '../platform/platform-call-observer.js';

/** Where the pipeline stands, read from PostgreSQL when Prometheus scrapes (worker processes). */
export interface PipelineGauges {
  turns: Array<{ status: string; count: number }>;
  oldestWaitingMessageSeconds: number;
}

/** Reads queue sizes when Prometheus scrapes (registered by whoever owns the queues). */
export type QueueCountsReader = () => Promise<
  Array<{ queue: string; counts: Record<string, number> }>
>;

/** The queue states reported by queue_jobs. */
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The service's Prometheus series, one registry per process (each pod is
 * scraped on its own). Names follow Prometheus conventions.
 */
@Injectable()
export class MetricsService implements PlatformCallObserver {
  readonly registry = new Registry();
  private readonly queueReaders: QueueCountsReader[] = [];
  private pipelineReader?: () => Promise<PipelineGauges>;
  private eventReader?: () => Promise<Array<{ subscription_id: string; age: number }>>;

  readonly httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly webhookDeliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook deliveries (and the messages in them) by outcome',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly agentAttempts = new Counter({
    name: 'agent_attempts_total',
    help: 'Agent calls by outcome: ok, retry (to be tried again), failed (final)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly agentDuration = new Histogram({
    name: 'agent_call_duration_seconds',
    help: 'Agent call latency, per attempt',
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly turnsFinished = new Counter({
    name: 'turns_finished_total',
    help: 'Turns that ended, by final state (done, failed, skipped)',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly replyParts = new Counter({
    name: 'reply_parts_total',
    help: 'Reply part attempts by outcome: sent, retry, failed, uncertain, skipped',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly platformCalls = new Counter({
    name: 'platform_calls_total',
    help: 'Platform API calls by endpoint, HTTP status and platform error code',
    labelNames: ['endpoint', 'status', 'code'] as const,
    registers: [this.registry],
  });

  readonly platformDuration = new Histogram({
    name: 'platform_call_duration_seconds',
    help: 'Platform API call latency by endpoint',
    labelNames: ['endpoint'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly sends = new Counter({
    name: 'messages_sent_total',
    help: 'Messages accepted by the platform, by type',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });

  readonly eventDeliveries = new Counter({
    name: 'event_deliveries_total',
    help: 'Event delivery attempts by outcome: delivered, retry (failed, to be tried again), failed (retries ran out)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly eventLatency = new Histogram({
    name: 'event_delivery_latency_seconds',
    help: 'From an event happening to its subscriber acknowledging it',
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly liveRests = new Counter({
    name: 'live_stream_rests_total',
    help: 'Live streams sent more than LIVE_STREAM_RATE events a second, which rested and then started over',
    registers: [this.registry],
  });

  readonly liveUnread = new Counter({
    name: 'live_changes_unread_total',
    help: 'Reads of changed rows an api process skipped because every live stream of their instance rested',
    registers: [this.registry],
  });

  readonly eventSubscriptionsDisabled = new Counter({
    name: 'event_subscriptions_disabled_total',
    help: 'Event subscriptions disabled by their failures: gone (410), failing (a run longer than EVENT_DISABLE_AFTER_S)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    const readPipeline = async (): Promise<PipelineGauges | undefined> =>
      this.pipelineReader?.().catch(() => undefined);
    new Gauge({
      name: 'turns',
      help: 'Open turns by state, and failed turns (dead letters awaiting an operator)',
      labelNames: ['state'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const { status, count } of (await readPipeline())?.turns ?? []) {
          this.set({ state: status }, count);
        }
      },
    });
    new Gauge({
      name: 'oldest_waiting_message_age_seconds',
      help: 'Age of the oldest inbound message waiting for a turn (alert when it grows)',
      registers: [this.registry],
      async collect() {
        const gauges = await readPipeline();
        if (gauges) this.set(gauges.oldestWaitingMessageSeconds);
      },
    });
    const readEvents = async (): Promise<Array<{ subscription_id: string; age: number }>> =>
      (await this.eventReader?.().catch(() => undefined)) ?? [];
    new Gauge({
      name: 'event_oldest_pending_age_seconds',
      help: 'Per subscription, the age of the oldest event not yet delivered (alert when it grows)',
      labelNames: ['subscription'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const { subscription_id, age } of await readEvents()) {
          this.set({ subscription: subscription_id }, age);
        }
      },
    });
    const readers = this.queueReaders;
    new Gauge({
      name: 'queue_jobs',
      help: 'Jobs per queue and state (waiting, active, delayed, failed)',
      labelNames: ['queue', 'state'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const read of readers) {
          for (const { queue, counts } of await read().catch(() => [])) {
            for (const [state, value] of Object.entries(counts)) this.set({ queue, state }, value);
          }
        }
      },
    });
  }

  platformCall({ endpoint, status, code, seconds }: PlatformCallOutcome): void {
    this.platformDuration.observe({ endpoint }, seconds);
    this.platformCalls.inc({ endpoint, status, code });
  }

  addQueueReader(reader: QueueCountsReader): void {
    this.queueReaders.push(reader);
  }

  /** Set by the event dispatcher (worker processes). */
  setEventReader(reader: () => Promise<Array<{ subscription_id: string; age: number }>>): void {
    this.eventReader = reader;
  }

  /** Set by the worker side, which owns the turns; api processes report no pipeline gauges. */
  setPipelineReader(reader: () => Promise<PipelineGauges>): void {
    this.pipelineReader = reader;
  }
}
