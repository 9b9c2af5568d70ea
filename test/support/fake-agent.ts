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
  /** Never answer (the call stays in flight until the caller gives up or dies). */
  hang?: boolean;
}

/** A real HTTP server standing in for the AI agent: records calls, answers as scripted. */
export class FakeAgent {
  readonly calls: AgentCall[] = [];
  private answers: AgentAnswer[] = [];
  private fallback: (call: AgentCall) => AgentAnswer = (call) => ({
    body: { reply: `echo: ${call.body.text}` },
  });
  private readonly hanging = new Set<ServerResponse>();
  private server?: Server;
  port: number;

  get url(): string {
    return `http://127.0.0.1:${this.port}/agent`;
  }

  /** Listens on `port` (a random one by default). */
  static async start(port = 0): Promise<FakeAgent> {
    const agent = new FakeAgent();
    agent.port = port;
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
        this.calls.push(call);
        const answer = this.answers.shift() ?? this.fallback(call);
        if (answer.hang) {
          this.hanging.add(res);
          return;
        }
        setTimeout(() => {
          if (answer.status === 204) {
            res.writeHead(204).end();
            return;
          }
          res.writeHead(answer.status ?? 200, {
            'content-type': 'application/json',
            ...answer.headers,
          });
          res.end(JSON.stringify(answer.body ?? {}));
        }, answer.delayMs ?? 0);
      });
    });
    server.listen(this.port, '127.0.0.1');
    await once(server, 'listening');
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening: calls are refused (ECONNREFUSED) until up(). */
  async down(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
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
    this.answers = [];
    this.fallback = (call) => ({ body: { reply: `echo: ${call.body.text}` } });
  }

  stop(): Promise<void> {
    return this.down();
  }
}
