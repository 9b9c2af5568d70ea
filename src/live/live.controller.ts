import { Controller, Get, Headers, Query, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AccessCheck } from '../auth/access-check.js';
import { InboxAuth } from '../auth/auth.decorators.js';
import { ClientInstance } from '../auth/client-context.js';
import { InstanceScopedDto } from '../common/instance-scoped.dto.js';
import { AppConfig } from '../config/app-config.js';
import type { Instance } from '../instances/instance.types.js';
import { LiveFeed, sseFrame as frame, type LiveEvent, type LiveSink } from './live-feed.service.js';

/** How long a browser waits before it reconnects a dropped stream (the SSE `retry` field). */
const RETRY_MS = 1000;

/**
 * What a stream may hold unsent (a client that stopped reading): beyond it
 * the stream ends, and the client's reconnection resumes or starts over.
 */
const MAX_UNSENT_BYTES = 1024 * 1024;

@ApiTags('live')
@Controller('live')
export class LiveController {
  constructor(
    private readonly feed: LiveFeed,
    private readonly access: AccessCheck,
    private readonly config: AppConfig,
  ) {}

  @InboxAuth()
  @Get()
  @ApiOperation({
    operationId: 'liveStream',
    summary: "An instance's changes as they are stored (Server-Sent Events)",
    description:
      'A `text/event-stream` of the instance: `message` (`{ contact, message }`, as ' +
      '`GET /contacts` and `GET /contacts/{key}/messages` show them) when a message is ' +
      'stored or its status moves, `contact` (`{ contact }`) when a pause, an opt-out, a name ' +
      'or a key changes. `ready` comes once everything stored from then on will be sent: read ' +
      'the API after it. With `Last-Event-ID` (a browser sends it when it reconnects) the ' +
      'events missed since are sent first; when they cannot be known (another replica ' +
      'answers, or too many passed) `reset` comes instead: read the API again. Every replica ' +
      'sends every change (PostgreSQL notifies them all).',
  })
  @ApiProduces('text/event-stream')
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'The id of the last event received, to resume after it',
  })
  @ApiOkResponse({
    description: 'The stream, until the client or the server closes it',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  async stream(
    @Query() _query: InstanceScopedDto,
    @Headers('last-event-id') lastEventId: string | undefined,
    @ClientInstance() instance: Instance,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const raw = reply.raw;
    let open = true;
    // Events that come while the stream is being set up wait, in order, behind the replay.
    let queued: LiveEvent[] | null = [];
    // The events of one moment leave in one write (one system call, not one each).
    let batch: string[] | null = null;
    const writeBatch = () => {
      const text = batch!.join('');
      batch = null;
      if (!open) return;
      raw.write(text);
      // A client that stopped reading: its stream goes at once (it would only pile up).
      if (raw.writableLength > MAX_UNSENT_BYTES) {
        closed();
        raw.destroy();
      }
    };
    const sink: LiveSink = {
      send: (event) => {
        if (queued) queued.push(event);
        else if (!open) return;
        else if (batch) batch.push(event.frame);
        else {
          batch = [event.frame];
          queueMicrotask(writeBatch);
        }
      },
      close: () => {
        closed();
        raw.end();
      },
    };
    const timer: { keepAlive?: NodeJS.Timeout } = {};
    const closed = () => {
      if (!open) return;
      open = false;
      clearInterval(timer.keepAlive);
      this.feed.unsubscribe(instance.id, sink);
    };
    request.raw.on('close', closed);
    raw.on('close', closed);
    // A write the connection can no longer take (the client went) ends the stream quietly.
    raw.on('error', closed);
    try {
      await this.feed.subscribe(instance.id, sink);
    } catch (error) {
      // Not streaming yet: the error answers as any route's does.
      this.feed.unsubscribe(instance.id, sink);
      throw error;
    }
    void reply.hijack();
    // The client left while the stream was set up (perhaps before this handler listened).
    if (!open || request.raw.destroyed || raw.destroyed) {
      closed();
      return;
    }
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    // Each keep-alive asks again whether the credentials still open the instance: a revoked
    // key, a disabled account or an operator moved elsewhere ends the stream.
    timer.keepAlive = setInterval(() => {
      if (!open) return;
      raw.write(': keep-alive\n\n');
      void this.access.stillAllowed(request, instance.id).then((allowed) => {
        if (allowed || !open) return;
        closed();
        raw.end(frame({ id: this.feed.currentId(), type: 'ended', data: '{}' }));
      });
    }, this.config.LIVE_KEEPALIVE_S * 1000);
    raw.write(`retry: ${RETRY_MS}\n\n`);
    const missed = lastEventId ? this.feed.since(instance.id, lastEventId) : null;
    const at = this.feed.currentId();
    if (lastEventId && !missed) raw.write(frame({ id: at, type: 'reset', data: '{}' }));
    for (const event of missed ?? []) raw.write(event.frame);
    raw.write(frame({ id: at, type: 'ready', data: JSON.stringify({ resumed: missed !== null }) }));
    const seen = Number(at.split('.')[1]);
    for (const event of queued)
      if (event.seq > seen || event.type === 'reset') raw.write(event.frame);
    queued = null;
  }
}
