import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import axios, { AxiosError, type AxiosInstance } from 'axios';
import { AppConfig } from '../config/app-config.js';
import type { AgentRequest } from './agent-payload.js';

export const AGENT_MAX_ATTEMPTS = 3;

/** What the agent answered: nothing, one text, or a list of /send bodies (validated later). */
export type AgentAnswer =
  { kind: 'none' } | { kind: 'reply'; text: string } | { kind: 'replies'; replies: unknown[] };

export class AgentCallError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'AgentCallError';
  }
}

/** Calls the agent module: timeouts, connection errors and 5xx are retried with backoff. */
@Injectable()
export class AgentClient implements OnApplicationShutdown {
  private readonly logger = new Logger(AgentClient.name);
  private readonly http: AxiosInstance;
  private readonly httpAgent = new HttpAgent({ keepAlive: true });
  private readonly httpsAgent = new HttpsAgent({ keepAlive: true });
  /** Wait before attempt n+1 is backoffMs × 2^(n-1); tests shorten it. */
  backoffMs = 1000;

  constructor(private readonly config: AppConfig) {
    this.http = axios.create({
      timeout: config.AGENT_TIMEOUT_MS,
      httpAgent: this.httpAgent,
      httpsAgent: this.httpsAgent,
      maxRedirects: 0,
      validateStatus: () => true,
      transitional: { clarifyTimeoutError: true },
    });
  }

  get enabled(): boolean {
    return this.config.AGENT_MODULE_URL !== undefined;
  }

  onApplicationShutdown(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  /** Sends the batch; the same Idempotency-Key on every attempt lets the agent drop repeats. */
  async call(request: AgentRequest): Promise<{ answer: AgentAnswer; attempts: number }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return { answer: await this.attempt(request), attempts: attempt };
      } catch (error) {
        const failure =
          error instanceof AgentCallError ? error : new AgentCallError(String(error), false);
        this.logger.warn(
          { batchId: request.batch_id, attempt, reason: failure.message },
          'agent call failed',
        );
        if (!failure.retryable || attempt >= AGENT_MAX_ATTEMPTS) throw failure;
        await sleep(this.backoffMs * 2 ** (attempt - 1));
      }
    }
  }

  private async attempt(request: AgentRequest): Promise<AgentAnswer> {
    let response;
    try {
      response = await this.http.post<unknown>(this.config.AGENT_MODULE_URL!, request, {
        headers: {
          'content-type': 'application/json',
          'idempotency-key': request.batch_id,
          ...(this.config.AGENT_MODULE_TOKEN
            ? { authorization: `Bearer ${this.config.AGENT_MODULE_TOKEN}` }
            : {}),
        },
      });
    } catch (error) {
      const code = error instanceof AxiosError ? (error.code ?? 'network error') : 'network error';
      throw new AgentCallError(`agent unreachable (${code})`, true);
    }
    if (response.status >= 500) {
      throw new AgentCallError(`agent answered HTTP ${response.status}`, true);
    }
    if (response.status >= 300) {
      throw new AgentCallError(`agent answered HTTP ${response.status}`, false);
    }
    return parseAnswer(response.status, response.data);
  }
}

export function parseAnswer(status: number, data: unknown): AgentAnswer {
  if (status === 204 || data === undefined || data === null || data === '') return { kind: 'none' };
  const body = data as { reply?: unknown; replies?: unknown };
  if (Array.isArray(body.replies)) {
    return body.replies.length > 0 ? { kind: 'replies', replies: body.replies } : { kind: 'none' };
  }
  if (typeof body.reply === 'string' && body.reply.trim().length > 0) {
    return { kind: 'reply', text: body.reply };
  }
  return { kind: 'none' };
}
