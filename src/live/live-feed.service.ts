import { randomBytes, randomUUID } from 'node:crypto';
import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { ContactStore } from '../contacts/contact.store.js';
import type { Contact } from '../contacts/contact.types.js';
import { ContactListItemDto } from '../contacts/dto/contact.dto.js';
import { arrivalPosition } from '../conversations/conversation-cursors.js';
import { ConversationMessageDto } from '../conversations/dto/conversation.dto.js';
import { MessageStore } from '../messages/message.store.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { LiveStore, type LiveListening, type LiveNotice } from './live.store.js';

/** What a live stream sends: a contact or a message of its instance changed, or start over. */
export interface LiveEvent {
  /** `<epoch>.<seq>`: the SSE id a reconnecting stream resumes after (Last-Event-ID). */
  id: string;
  seq: number;
  instanceId: string;
  type: 'contact' | 'message' | 'reset';
  /** The event's JSON, serialised once for every stream that gets it. */
  data: string;
  /** The whole Server-Sent Event, written as it is to every stream that gets it. */
  frame: string;
}

/** An event as a stream writes it. */
export function sseFrame(event: { id: string; type: string; data: string }): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${event.data}\n\n`;
}

/**
 * A stream's allowance: LIVE_STREAM_RATE events a second, a second's worth
 * at once. Over it the stream rests (is sent nothing) for
 * LIVE_STREAM_REST_S, then gets `reset` and reads the API once: a flood
 * costs each stream one read, not every event.
 */
interface Allowance {
  tokens: number;
  at: number;
  resting: NodeJS.Timeout | null;
}

/** One open stream, as the feed writes to it. */
export interface LiveSink {
  send(event: LiveEvent): void;
  /** The process is stopping: end the stream (the client reconnects elsewhere). */
  close(): void;
}

/** Events kept for streams that reconnect (Last-Event-ID), across all instances. */
const RECENT_EVENTS = 2000;
/** A process's live_listeners rows last this long unless renewed, every RENEW_EVERY_MS. */
const LISTENER_TTL_S = 60;
const RENEW_EVERY_MS = 20_000;
/** The most a new stream waits for transactions older than its instance's row. */
const OLDER_TRANSACTIONS_WAIT_MS = 10_000;

/**
 * The live streams of one api process (GET /live). The triggers notify
 * (mc_live_notify) which messages and contacts of a watched instance
 * changed; the feed reads them once and sends the same event to every
 * stream of that instance, so the cost follows the changes, not the number
 * of open sessions. Each process keeps its recent events in memory: a stream
 * that reconnects to it is sent what it missed; one whose last event this
 * process cannot vouch for (another replica's, before a lost connection to
 * PostgreSQL, or too old) is told to start over (`reset`) and reads the
 * API again, so nothing committed is missed either way.
 */
@Injectable()
export class LiveFeed implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(LiveFeed.name);
  private readonly processId = randomUUID();
  /** Changes whenever the notifications may have had a gap: ids of another epoch cannot resume. */
  private epoch = newEpoch();
  private seq = 0;
  private readonly sinks = new Map<string, Set<LiveSink>>();
  private readonly recent: LiveEvent[] = [];
  /**
   * Instances this process watches: their live_listeners row, committed and
   * past the transactions older than it. `from` is the seq from which the
   * feed has every change of the instance (set once it is watched): a stream
   * that saw less cannot resume. Kept a renewal past its last stream, so a
   * stream that reconnects meanwhile resumes.
   */
  private readonly registered = new Map<string, { ready: Promise<void>; from: number }>();
  private listening: LiveListening | null = null;
  private firstConnection: Promise<void> | null = null;
  private renewTimer: NodeJS.Timeout | null = null;
  private writing: Promise<unknown> = Promise.resolve();
  /** Instances whose last stream ended since the last renewal. */
  private readonly recentlyLeft = new Set<string>();
  private readonly pending = new Map<string, { messages: Set<string>; contacts: Set<string> }>();
  private flushing: Promise<void> | null = null;
  private stopped = false;
  /** Aborted as the process stops: a new stream's wait ends at once. */
  private readonly stopping = new AbortController();
  private readonly allowances = new Map<LiveSink, Allowance>();

  constructor(
    private readonly store: LiveStore,
    private readonly contacts: ContactStore,
    private readonly messages: MessageStore,
    private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {}

  /** The id a stream that has seen everything until now stands at. */
  currentId(): string {
    return `${this.epoch}.${this.seq}`;
  }

  /**
   * Adds a stream of an instance. Resolves once whatever is committed from
   * then on reaches it: a read of the API made after that misses nothing
   * the stream will not bring.
   */
  async subscribe(instanceId: string, sink: LiveSink): Promise<void> {
    let set = this.sinks.get(instanceId);
    if (!set) this.sinks.set(instanceId, (set = new Set()));
    set.add(sink);
    const rate = this.config.LIVE_STREAM_RATE;
    this.allowances.set(sink, { tokens: rate, at: performance.now(), resting: null });
    await this.startListening();
    await this.register(instanceId);
  }

  unsubscribe(instanceId: string, sink: LiveSink): void {
    const set = this.sinks.get(instanceId);
    set?.delete(sink);
    const resting = this.allowances.get(sink)?.resting;
    if (resting) clearTimeout(resting);
    this.allowances.delete(sink);
    // Still watched until a renewal has passed: a stream that reconnects meanwhile resumes.
    if (set?.size === 0) {
      this.sinks.delete(instanceId);
      this.recentlyLeft.add(instanceId);
    }
  }

  /**
   * What an instance's stream missed after `lastId`, or null when this
   * process cannot tell (the stream must start over).
   */
  since(instanceId: string, lastId: string): LiveEvent[] | null {
    const match = /^([0-9a-f]{16})\.(\d+)$/.exec(lastId);
    if (!match || match[1] !== this.epoch) return null;
    const seq = Number(match[2]);
    const watched = this.registered.get(instanceId);
    if (seq > this.seq || !watched || seq < watched.from) return null;
    // The events after `seq` were all kept if the oldest kept is the next one, or earlier.
    const oldest = this.recent[0]?.seq ?? this.seq + 1;
    if (seq + 1 < oldest) return null;
    return this.recent.filter((event) => event.seq > seq && event.instanceId === instanceId);
  }

  beforeApplicationShutdown(): void {
    this.stopped = true;
    this.stopping.abort();
    // Open streams would hold the server's close: they end, and clients reconnect elsewhere.
    for (const set of this.sinks.values()) for (const sink of set) sink.close();
    this.sinks.clear();
    for (const { resting } of this.allowances.values()) if (resting) clearTimeout(resting);
    this.allowances.clear();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.renewTimer) clearInterval(this.renewTimer);
    await this.listening?.close();
    if (this.firstConnection) await this.store.release(this.processId).catch(() => undefined);
  }

  private startListening(): Promise<void> {
    if (this.firstConnection) return this.firstConnection;
    let connected!: () => void;
    this.firstConnection = new Promise<void>((resolve) => (connected = resolve));
    let connections = 0;
    this.listening = this.store.listen(
      (notice) => this.noticed(notice),
      () => {
        if (connections++ === 0) connected();
        else this.reconnected();
      },
    );
    this.renewTimer = setInterval(() => void this.renew(), RENEW_EVERY_MS);
    this.renewTimer.unref();
    return this.firstConnection;
  }

  /** Registers an instance's row (once per process while streamed) and waits out older transactions. */
  private register(instanceId: string): Promise<void> {
    let registration = this.registered.get(instanceId);
    if (!registration) {
      const entry = { ready: Promise.resolve(), from: Number.MAX_SAFE_INTEGER };
      entry.ready = (async () => {
        const at = await this.writeRows();
        const passed = await this.store.waitForOlderTransactions(
          at,
          OLDER_TRANSACTIONS_WAIT_MS,
          this.stopping.signal,
        );
        if (!passed) {
          this.logger.warn(
            { instanceId },
            'a transaction older than a new live stream is still open: the stream starts without waiting for it',
          );
        }
        entry.from = this.seq;
      })();
      registration = entry;
      this.registered.set(instanceId, entry);
      // A failure is the caller's (its stream fails); the next stream tries again.
      entry.ready.catch(() => {
        if (this.registered.get(instanceId) === entry) this.registered.delete(instanceId);
      });
    }
    return registration.ready;
  }

  /** The instances this process watches. */
  private watched(): string[] {
    return [...new Set([...this.sinks.keys(), ...this.registered.keys()])];
  }

  /**
   * Writes this process's rows as the instances watched are when the write
   * runs. One write at a time: a renewal that read the list before a new
   * instance came must not delete the row that instance's registration wrote.
   */
  private writeRows(): Promise<Date> {
    const write = this.writing
      .catch(() => undefined)
      .then(() => this.store.renew(this.processId, this.watched(), LISTENER_TTL_S));
    this.writing = write;
    return write;
  }

  /**
   * Keeps the rows of the instances streamed now. One without a stream since
   * the last renewal is no longer watched (its row goes).
   */
  private async renew(): Promise<void> {
    for (const id of this.registered.keys()) {
      if (!this.sinks.has(id) && !this.recentlyLeft.delete(id)) this.registered.delete(id);
    }
    for (const id of this.recentlyLeft) if (this.sinks.has(id)) this.recentlyLeft.delete(id);
    try {
      await this.writeRows();
    } catch (error) {
      this.logger.warn({ err: (error as Error).message }, 'live listeners could not be renewed');
    }
  }

  /**
   * The listening connection came back: notifications may have been missed.
   * Every stream starts over once its instance is registered anew.
   */
  private reconnected(): void {
    this.epoch = newEpoch();
    this.seq = 0;
    this.recent.length = 0;
    this.registered.clear();
    this.recentlyLeft.clear();
    for (const instanceId of this.sinks.keys()) {
      this.register(instanceId).then(
        () => this.emit(instanceId, 'reset', {}),
        () => this.emit(instanceId, 'reset', {}),
      );
    }
  }

  private noticed(notice: LiveNotice): void {
    if (!this.registered.has(notice.instanceId)) return;
    let pending = this.pending.get(notice.instanceId);
    if (!pending) {
      pending = { messages: new Set(), contacts: new Set() };
      this.pending.set(notice.instanceId, pending);
    }
    const into = notice.kind === 'message' ? pending.messages : pending.contacts;
    for (const id of notice.ids) into.add(id);
    // One flush at a time, in order; notices that come during one are read by the next.
    this.flushing ??= (async () => {
      try {
        while (this.pending.size > 0) await this.flush();
      } finally {
        this.flushing = null;
      }
    })();
  }

  /** Reads what the notices since the last flush named, and sends it: one read for all streams. */
  private async flush(): Promise<void> {
    // Notices of the same moment (one commit writes several) share the read.
    await new Promise((resolve) => setImmediate(resolve));
    const batch = new Map(this.pending);
    this.pending.clear();
    for (const [instanceId, { messages, contacts }] of batch) {
      if (this.stopped || !this.registered.has(instanceId)) continue;
      if (this.allResting(instanceId)) {
        // Nobody would be sent these: not read. A stream that last saw an
        // earlier event cannot resume past them (it is told to start over).
        this.registered.get(instanceId)!.from = ++this.seq;
        this.metrics.liveUnread.inc();
        continue;
      }
      try {
        const changed = (await this.messages.conversationMessages([...messages])).filter(
          (m) => m.instance_id === instanceId && m.contact_id !== null && m.type !== 'unknown',
        );
        const contactIds = new Set(contacts);
        for (const message of changed) contactIds.add(message.contact_id!);
        const byId = new Map<string, Contact>(
          (await this.contacts.contactsByIds([...contactIds]))
            .filter((c) => c.instance_id === instanceId)
            .map((c) => [c.id, c]),
        );
        changed.sort((x, y) => (arrivalPosition(x) < arrivalPosition(y) ? -1 : 1));
        const summaries = await this.messages.contactSummaries([...byId.keys()]);
        const listed = (contact: Contact) =>
          ContactListItemDto.withSummary(contact, summaries.get(contact.id));
        const told = new Set<string>();
        for (const message of changed) {
          const contact = byId.get(message.contact_id!);
          if (!contact) continue;
          told.add(contact.id);
          this.emit(instanceId, 'message', {
            contact: listed(contact),
            message: ConversationMessageDto.from(message),
          });
        }
        for (const id of contacts) {
          const contact = byId.get(id);
          if (contact && !told.has(id)) {
            this.emit(instanceId, 'contact', { contact: listed(contact) });
          }
        }
      } catch (error) {
        this.logger.warn(
          { instanceId, err: (error as Error).message },
          'live changes could not be read: the streams start over',
        );
        this.emit(instanceId, 'reset', {});
      }
    }
  }

  private emit(instanceId: string, type: LiveEvent['type'], data: object): void {
    const seq = ++this.seq;
    const event = liveEvent(`${this.epoch}.${seq}`, seq, instanceId, type, JSON.stringify(data));
    this.recent.push(event);
    if (this.recent.length > RECENT_EVENTS * 2) this.recent.splice(0, RECENT_EVENTS);
    for (const sink of this.sinks.get(instanceId) ?? []) this.deliver(sink, event);
  }

  /** Sends an event to a stream within its allowance; over it, the stream rests. */
  private deliver(sink: LiveSink, event: LiveEvent): void {
    const allowance = this.allowances.get(sink);
    if (!allowance) return sink.send(event);
    if (allowance.resting) return;
    const rate = this.config.LIVE_STREAM_RATE;
    const now = performance.now();
    allowance.tokens = Math.min(rate, allowance.tokens + ((now - allowance.at) / 1000) * rate);
    allowance.at = now;
    if (allowance.tokens >= 1) {
      allowance.tokens -= 1;
      return sink.send(event);
    }
    this.metrics.liveRests.inc();
    allowance.resting = setTimeout(
      () => {
        allowance.resting = null;
        allowance.tokens = rate;
        allowance.at = performance.now();
        // It missed what came meanwhile: it reads the API again.
        sink.send(liveEvent(this.currentId(), this.seq, event.instanceId, 'reset', '{}'));
        // Up to half as long again, at random: the streams a flood sent to rest together
        // come back (and read the API) one by one, not all at once.
      },
      this.config.LIVE_STREAM_REST_S * 1000 * (1 + Math.random() / 2),
    );
    allowance.resting.unref();
  }

  /** Whether an instance has streams and every one of them rests. */
  private allResting(instanceId: string): boolean {
    const set = this.sinks.get(instanceId);
    if (!set || set.size === 0) return false;
    for (const sink of set) if (!this.allowances.get(sink)?.resting) return false;
    return true;
  }
}

function liveEvent(
  id: string,
  seq: number,
  instanceId: string,
  type: LiveEvent['type'],
  data: string,
): LiveEvent {
  return { id, seq, instanceId, type, data, frame: sseFrame({ id, type, data }) };
}

function newEpoch(): string {
  return randomBytes(8).toString('hex');
}
