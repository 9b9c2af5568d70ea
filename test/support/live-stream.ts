import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { waitUntil } from './wait.js';

/** An event as a live stream sent it, its data parsed. */
export interface StreamEvent {
  id: string | undefined;
  event: string;
  data: Record<string, unknown>;
}

/**
 * A client of GET /live that keeps every event it was sent, as a browser's
 * EventSource would read them (without reconnecting by itself).
 */
export class LiveStreamClient {
  readonly events: StreamEvent[] = [];
  status = 0;
  private readonly abort = new AbortController();
  private done: Promise<void> = Promise.resolve();

  private constructor() {}

  /** Opens a stream; resolves once it answered (check `status`), before `ready`. */
  static async open(
    baseUrl: string,
    token: string,
    query = '',
    headers: Record<string, string> = {},
  ): Promise<LiveStreamClient> {
    const client = new LiveStreamClient();
    const response = await fetch(`${baseUrl}/live${query}`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers },
      signal: client.abort.signal,
    });
    client.status = response.status;
    if (!response.ok || !response.body) {
      client.error = (await response.json().catch(() => undefined)) as Record<string, unknown>;
      return client;
    }
    const parser = createParser({
      onEvent: (message: EventSourceMessage) =>
        client.events.push({
          id: message.id,
          event: message.event ?? 'message',
          data: JSON.parse(message.data) as Record<string, unknown>,
        }),
    });
    const decoder = new TextDecoder();
    const reader = response.body.getReader();
    client.done = (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.feed(decoder.decode(value, { stream: true }));
        }
      } catch {
        // aborted
      }
      client.ended = true;
    })();
    return client;
  }

  error: Record<string, unknown> | undefined;
  /** The server closed the stream. */
  ended = false;

  /** The events of a type. */
  of(type: string): StreamEvent[] {
    return this.events.filter((e) => e.event === type);
  }

  /** Waits for the first event (after those already matched `skip` times) that matches. */
  async next(match: (event: StreamEvent) => boolean, ms = 10_000): Promise<StreamEvent> {
    let found: StreamEvent | undefined;
    await waitUntil(() => (found = this.events.find(match)) !== undefined, ms);
    if (!found) {
      throw new Error(`no such event; got ${JSON.stringify(this.events.map((e) => e.event))}`);
    }
    return found;
  }

  /** The id of the last event that had one (what a browser sends as Last-Event-ID). */
  lastId(): string | undefined {
    return this.events.filter((e) => e.id).at(-1)?.id;
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.done;
  }
}
