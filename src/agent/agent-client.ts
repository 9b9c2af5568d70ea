import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import axios, { AxiosError, type AxiosInstance } from 'axios';
import { retryAfterMs } from '../common/backoff.js';
import { keepAliveAgents } from '../common/http-agents.js';
import { AppConfig } from '../config/app-config.js';
import type { AgentSettings } from '../instances/instance.types.js';
import { TargetGuard, TargetRefusedError } from '../outbound/target-guard.js';
import type { AgentRequest } from './agent-payload.js';

/** What the agent answered: nothing, one text, or a list of /send bodies (validated later). */
export type AgentAnswer =
  { kind: 'none' } | { kind: 'reply'; text: string } | { kind: 'replies'; replies: unknown[] };

/** The agent asks for a person: `{ "handoff": true, "reason": "…", "reply": "optional text" }`. */
export interface AgentHandoff {
  reason: string | null;
}

/** Statuses after which the same call may succeed later; any other 3xx/4xx is final. */
export const RETRYABLE_AGENT_STATUSES: ReadonlySet<number> = new Set([408, 429]);

/** One call to the agent: its answer, or why it failed and whether a later attempt may succeed. */
export type AgentAttempt =
  | { ok: true; answer: AgentAnswer; raw: unknown; handoff: AgentHandoff | null }
  | { ok: false; retryable: boolean; reason: string; retryAfterMs?: number };

/**
 * Calls the agent module, one attempt at a time: the turn runner decides
 * when to try again (timeouts, connection errors, 5xx, 408 and 429 may be
 * retried; other answers are final), so waiting never holds a worker. Every
 * call ends within AGENT_TIMEOUT_MS, however slowly the agent sends, and
 * reads at most AGENT_MAX_RESPONSE_BYTES of its answer. An instance's own
 * URL (set by an admin) is checked by TargetGuard before each call and on
 * each connection; AGENT_MODULE_URL comes from the environment and is trusted.
 */
@Injectable()
export class AgentClient implements OnApplicationShutdown {
  private readonly http: AxiosInstance;
  private readonly trusted = keepAliveAgents();
  private readonly guarded: ReturnType<typeof keepAliveAgents>;

  constructor(
    private readonly config: AppConfig,
    private readonly guard: TargetGuard,
  ) {
    this.guarded = keepAliveAgents(Infinity, guard.lookup, guard.plainHttpLookup);
    this.http = axios.create({
      maxRedirects: 0,
      validateStatus: () => true,
      // Counted as the body arrives (decompressed): a bigger answer is cut off, not read whole.
      maxContentLength: config.AGENT_MAX_RESPONSE_BYTES,
    });
  }

  onApplicationShutdown(): void {
    for (const agents of [this.trusted, this.guarded]) {
      agents.http.destroy();
      agents.https.destroy();
    }
  }

  /**
   * One attempt, to the instance's agent (its own, or the global one); the
   * same Idempotency-Key (the batch id) on every attempt lets the agent drop repeats.
   */
  async attempt(
    request: AgentRequest,
    agent: Pick<AgentSettings, 'url' | 'token' | 'guarded'>,
  ): Promise<AgentAttempt> {
    if (!agent.url)
      return { ok: false, retryable: false, reason: 'no agent is set for the instance' };
    if (agent.guarded) {
      // Refused before any connection: the turn learns nothing of what listens there.
      const why = this.guard.requestRefusal(agent.url);
      if (why) return { ok: false, retryable: false, reason: `agent URL refused: ${why}` };
    }
    const agents = agent.guarded ? this.guarded : this.trusted;
    // The whole call, connection to last byte: a socket timeout alone lets a dripping agent hold it.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.config.AGENT_TIMEOUT_MS);
    let response;
    try {
      response = await this.http.post<unknown>(agent.url, request, {
        headers: {
          'content-type': 'application/json',
          'idempotency-key': request.batch_id,
          ...(agent.token ? { authorization: `Bearer ${agent.token}` } : {}),
        },
        httpAgent: agents.http,
        httpsAgent: agents.https,
        signal: deadline.signal,
        // A proxy would connect for us, past the guard's lookup.
        ...(agent.guarded ? { proxy: false as const } : {}),
      });
    } catch (error) {
      return this.failure(error, deadline.signal.aborted);
    } finally {
      clearTimeout(timer);
    }
    if (response.status >= 200 && response.status < 300) {
      return {
        ok: true,
        answer: parseAnswer(response.status, response.data),
        raw: response.data,
        handoff: parseHandoff(response.data),
      };
    }
    return {
      ok: false,
      retryable: response.status >= 500 || RETRYABLE_AGENT_STATUSES.has(response.status),
      reason: `agent answered HTTP ${response.status}`,
      retryAfterMs: retryAfterMs(response.headers['retry-after']),
    };
  }

  /** Why a call got no answer, in words that carry no URL or token. */
  private failure(error: unknown, pastDeadline: boolean): AgentAttempt {
    if (pastDeadline) {
      return {
        ok: false,
        retryable: true,
        reason: `agent gave no complete answer within AGENT_TIMEOUT_MS (${this.config.AGENT_TIMEOUT_MS} ms)`,
      };
    }
    const refused = targetRefusal(error);
    if (refused) {
      return refused.unresolved
        ? { ok: false, retryable: true, reason: `agent unreachable: ${refused.message}` }
        : { ok: false, retryable: false, reason: `agent URL refused: ${refused.message}` };
    }
    if (error instanceof AxiosError && error.message.startsWith('maxContentLength')) {
      return {
        ok: false,
        retryable: false,
        reason:
          `agent answer is over AGENT_MAX_RESPONSE_BYTES (${this.config.AGENT_MAX_RESPONSE_BYTES} bytes): ` +
          'cut off, nothing of it kept',
      };
    }
    const code = error instanceof AxiosError ? (error.code ?? 'network error') : 'network error';
    return { ok: false, retryable: true, reason: `agent unreachable (${code})` };
  }
}

/** The guard's refusal behind a failed connection (axios wraps the lookup's error). */
function targetRefusal(error: unknown): TargetRefusedError | null {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof TargetRefusedError) return cause;
  }
  return null;
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

/** The agent's request for a person, when its answer makes one. */
export function parseHandoff(data: unknown): AgentHandoff | null {
  const body = data as { handoff?: unknown; reason?: unknown } | null;
  if (typeof body !== 'object' || body === null || body.handoff !== true) return null;
  return { reason: typeof body.reason === 'string' ? body.reason.slice(0, 500) : null };
}
