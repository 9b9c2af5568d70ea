import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
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
  delayMs?: number;
}

/** A real HTTP server standing in for the AI agent: records calls, answers as scripted. */
export class FakeAgent {
  readonly calls: AgentCall[] = [];
  private answers: AgentAnswer[] = [];
  private fallback: (call: AgentCall) => AgentAnswer = (call) => ({
    body: { reply: `echo: ${call.body.text}` },
  });
  private server: Server;
  url: string;

  static async start(): Promise<FakeAgent> {
    const agent = new FakeAgent();
    agent.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const call: AgentCall = {
          headers: req.headers,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as AgentCall['body'],
          at: Date.now(),
        };
        agent.calls.push(call);
        const answer = agent.answers.shift() ?? agent.fallback(call);
        setTimeout(() => {
          if (answer.status === 204) {
            res.writeHead(204).end();
            return;
          }
          res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(answer.body ?? {}));
        }, answer.delayMs ?? 0);
      });
    });
    agent.server.listen(0, '127.0.0.1');
    await once(agent.server, 'listening');
    agent.url = `http://127.0.0.1:${(agent.server.address() as AddressInfo).port}/agent`;
    return agent;
  }

  /** The next calls get these answers, in order; then the default echo. */
  answerNext(...answers: AgentAnswer[]): void {
    this.answers.push(...answers);
  }

  answerAlways(answer: (call: AgentCall) => AgentAnswer): void {
    this.fallback = answer;
  }

  reset(): void {
    this.calls.length = 0;
    this.answers = [];
    this.fallback = (call) => ({ body: { reply: `echo: ${call.body.text}` } });
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }
}
