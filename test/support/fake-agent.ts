import { once } from 'node:events';
import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AgentCall {
  headers: IncomingHttpHeaders;
  body: {
    batch_id: string;
    instance: Record<string, unknown>;
    contact: Record<string, unknown>;
    messages: Array<Record<string, unknown> & { id: string; text: string }>;
    text: string;
  };
  at: number;
}

export interface AgentAnswer {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  delayMs?: number;
  /** Never answer (the call stays in flight until the caller gives up, dies, or releaseHanging()). */
  hang?: boolean;
  /** Answer only once this settles (a test holds the agent while it does something). */
  release?: Promise<unknown>;
  /** Send the status at once, then the body one byte every `dripMs` (an agent that trickles). */
  dripMs?: number;
}

export interface FakeAgentOptions {
  /** Listens on this port (a random one by default). */
  port?: number;
  /** Listens on this loopback address (127.0.0.1 by default), e.g. one EVENT_TARGET_ALLOWLIST names. */
  host?: string;
  /** Keeps every call in `calls` (the default); a long run turns it off and reads `given`. */
  record?: boolean;
  /** How long an idle keep-alive connection stays open, in ms (Node's default otherwise). */
  keepAliveTimeout?: number;
}

/**
 * A real HTTP server standing in for the AI agent: records calls, answers as
 * scripted (an echo of the text by default). The tests, the bench and the
 * demo all use it.
 */
export class FakeAgent {
  readonly calls: AgentCall[] = [];
  /** How many times each message id was given to the agent (kept even when calls are not). */
  readonly given = new Map<string, number>();
  /** The calls received (counted even when they are not kept). */
  callCount = 0;
  private answers: AgentAnswer[] = [];
  private fallback: (call: AgentCall) => AgentAnswer = (call) => ({
    body: { reply: `echo: ${call.body.text}` },
  });
  private readonly hanging = new Map<ServerResponse, AgentCall>();
  /** Dripped answers whose caller hung up before their last byte. */
  cutOff = 0;
  private server?: Server;
  port: number;

  private constructor(private readonly options: FakeAgentOptions) {}

  get host(): string {
    return this.options.host ?? '127.0.0.1';
  }

  get url(): string {
    return `http://${this.host}:${this.port}/agent`;
  }

  static async start(options: FakeAgentOptions = {}): Promise<FakeAgent> {
    const agent = new FakeAgent(options);
    agent.port = options.port ?? 0;
    await agent.up();
    return agent;
  }

  /** Listens again on the same port, after down(). */
  async up(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const call: AgentCall = {
          headers: req.headers,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as AgentCall['body'],
          at: Date.now(),
        };
        this.callCount++;
        for (const { id } of call.body.messages) this.given.set(id, (this.given.get(id) ?? 0) + 1);
        if (this.options.record !== false) this.calls.push(call);
        const answer = this.answers.shift() ?? this.fallback(call);
        if (answer.hang) {
          this.hanging.set(res, call);
          return;
        }
        if (answer.dripMs) {
          this.drip(res, answer, answer.dripMs);
          return;
        }
        const send = () => {
          if (answer.status === 204) {
            res.writeHead(204).end();
            return;
          }
          res.writeHead(answer.status ?? 200, {
            'content-type': 'application/json',
            ...answer.headers,
          });
          res.end(JSON.stringify(answer.body ?? {}));
        };
        if (answer.release) void answer.release.then(send, send);
        else if (answer.delayMs) setTimeout(send, answer.delayMs);
        else send();
      });
    });
    if (this.options.keepAliveTimeout !== undefined) {
      server.keepAliveTimeout = this.options.keepAliveTimeout;
    }
    server.listen(this.port, this.host);
    await once(server, 'listening');
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening: calls are refused (ECONNREFUSED) until up(). */
  async down(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const res of this.hanging.keys()) res.destroy();
    this.hanging.clear();
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  }

  /** Calls held by `hang` and not answered yet. */
  get hangingCount(): number {
    return this.hanging.size;
  }

  /** Answers every held call with what the fallback gives it now. */
  releaseHanging(): void {
    for (const [res, call] of this.hanging) {
      const answer = this.fallback(call);
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body ?? {}));
    }
    this.hanging.clear();
  }

  private drip(res: ServerResponse, answer: AgentAnswer, everyMs: number): void {
    const body = Buffer.from(JSON.stringify(answer.body ?? {}));
    res.writeHead(answer.status ?? 200, {
      'content-type': 'application/json',
      'content-length': String(body.length),
    });
    let sent = 0;
    const timer = setInterval(() => {
      res.write(body.subarray(sent, sent + 1));
      if (++sent === body.length) {
        clearInterval(timer);
        res.end();
      }
    }, everyMs);
    res.on('close', () => {
      clearInterval(timer);
      if (sent < body.length) this.cutOff++;
    });
  }

  /** The next calls get these answers, in order; then the default echo. */
  answerNext(...answers: AgentAnswer[]): void {
    this.answers.push(...answers);
  }

  answerAlways(answer: (call: AgentCall) => AgentAnswer): void {
    this.fallback = answer;
  }

  /** The calls for one contact. */
  callsFor(waId: string): AgentCall[] {
    return this.calls.filter((call) => call.body.contact.wa_id === waId);
  }

  reset(): void {
    this.calls.length = 0;
    this.given.clear();
    this.callCount = 0;
    this.cutOff = 0;
    this.answers = [];
    this.fallback = (call) => ({ body: { reply: `echo: ${call.body.text}` } });
  }

  stop(): Promise<void> {
    return this.down();
  }
}
