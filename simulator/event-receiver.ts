import { once } from 'node:events';
import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One POST a subscriber received. */
export interface ReceivedEvent {
  headers: IncomingHttpHeaders;
  /** The raw body, as signed. */
  body: string;
  event: {
    id: string;
    type: string;
    created_at: string;
    instance_id: string | null;
    data: Record<string, unknown>;
  };
  at: number;
}

export interface ReceiverAnswer {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Never answer (the sender times out or dies waiting). */
  hang?: boolean;
}

/**
 * Whether a received event carries a valid Standard Webhooks signature under
 * `secret` (checked with the `standardwebhooks` package, not the service's code).
 */
export function signatureValid(secret: string, received: ReceivedEvent): boolean {
  try {
    new Webhook(secret).verify(received.body, {
      'webhook-id': String(received.headers['webhook-id']),
      'webhook-timestamp': String(received.headers['webhook-timestamp']),
      'webhook-signature': String(received.headers['webhook-signature']),
    });
    return true;
  } catch {
    return false;
  }
}

/** One line saying what an event is about, for people reading a log. */
export function describeEvent({ event }: ReceivedEvent): string {
  const data = event.data as {
    message?: {
      wamid?: string;
      direction?: string;
      content?: { text?: { body?: string }; body?: string };
    };
    contact?: { wa_id?: string | null; user_id?: string | null };
    status?: string;
    sent_by?: string;
  };
  const who = data.contact?.wa_id ?? data.contact?.user_id ?? '';
  const text = data.message?.content?.text?.body ?? data.message?.content?.body;
  switch (event.type) {
    case 'message.received':
      return `from ${who}: ${JSON.stringify(text ?? data.message?.wamid)}`;
    case 'message.sent':
      return `to ${who} by ${data.sent_by}: ${JSON.stringify(text ?? data.message?.wamid)}`;
    case 'message.status':
      return `${data.message?.wamid} to ${who} is ${data.status}`;
    case 'contact.handoff': {
      const handoff = event.data as { paused?: boolean; by?: string };
      return `agent ${handoff.paused ? 'paused' : 'back'} for ${who} (by ${handoff.by})`;
    }
    default:
      return JSON.stringify(event.data).slice(0, 200);
  }
}

/**
 * A real HTTP server standing in for a client system that subscribed to
 * events: records every POST (failed ones too), answers as scripted (204 by
 * default). The tests, the bench and the demo use it.
 */
export class EventReceiver {
  readonly received: ReceivedEvent[] = [];
  /** Counted even when `record` is off. */
  count = 0;
  private decide: (event: ReceivedEvent) => ReceiverAnswer = () => ({ status: 204 });
  private readonly hanging = new Set<ServerResponse>();
  private server?: Server;
  url = '';

  private constructor(private readonly record: boolean) {}

  static async start(options: { record?: boolean; port?: number } = {}): Promise<EventReceiver> {
    const receiver = new EventReceiver(options.record ?? true);
    await receiver.listen(options.port ?? 0);
    return receiver;
  }

  /** Told of every POST, before it is answered. */
  onEvent?: (received: ReceivedEvent) => void;

  private async listen(port: number): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let event: ReceivedEvent['event'];
        try {
          event = JSON.parse(body) as ReceivedEvent['event'];
        } catch {
          event = { id: '', type: 'unreadable', created_at: '', instance_id: null, data: {} };
        }
        const received = { headers: req.headers, body, event, at: Date.now() };
        this.count++;
        if (this.record) this.received.push(received);
        this.onEvent?.(received);
        const answer = this.decide(received);
        if (answer.hang) {
          this.hanging.add(res);
          return;
        }
        res.writeHead(answer.status ?? 204, answer.headers ?? {});
        res.end(answer.body ?? '');
      });
    });
    this.server.keepAliveTimeout = 2000;
    this.server.listen(port, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/events`;
  }

  /** How to answer each POST from now on. */
  answer(decide: (event: ReceivedEvent) => ReceiverAnswer): void {
    this.decide = decide;
  }

  /** The received events of a type (every attempt), in arrival order. */
  ofType(type: string): ReceivedEvent[] {
    return this.received.filter((r) => r.event.type === type);
  }

  reset(): void {
    this.received.length = 0;
    this.count = 0;
    this.decide = () => ({ status: 204 });
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}
