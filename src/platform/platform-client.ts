import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger, Optional, type OnApplicationShutdown } from '@nestjs/common';
import axios, { AxiosError, type AxiosInstance, type AxiosResponse } from 'axios';
import { AppException } from '../common/app.exception.js';
import { backoffDelay, retryAfterMs, type Backoff } from '../common/backoff.js';
import { keepAliveAgents } from '../common/http-agents.js';
import { AppConfig } from '../config/app-config.js';
import { PLATFORM_CALL_OBSERVER, type PlatformCallObserver } from './platform-call-observer.js';
import {
  NOT_SENT_NETWORK_CODES,
  PlatformError,
  RETRYABLE_HTTP_STATUSES,
  RETRYABLE_NETWORK_CODES,
  RETRYABLE_PLATFORM_CODES,
  THROTTLING_PLATFORM_CODES,
  type PlatformErrorBody,
  type PlatformFailure,
} from './platform.errors.js';
import type { PlatformMessage } from './platform-message.js';
import type {
  PhoneNumberDetails,
  PhoneNumberRecord,
  PlatformTemplate,
  PlatformTemplateCreated,
  PlatformTemplateDraft,
  RegisterRequest,
  RequestCodeRequest,
} from './platform.types.js';

/** The template fields a catalogue sync asks for. */
const TEMPLATE_FIELDS =
  'id,name,language,status,category,previous_category,parameter_format,components,quality_score,rejected_reason';

/** Templates per page of a catalogue sync (the platform's maximum is higher; this keeps answers small). */
export const TEMPLATE_PAGE_SIZE = 100;

export const PLATFORM_MAX_ATTEMPTS = 3;

/** Hosts the platform serves media files from (besides its API host). */
export const PLATFORM_MEDIA_HOST_SUFFIXES = [
  'fbsbx.com',
  'fbcdn.net',
  'whatsapp.net',
  'facebook.com',
];

export interface MediaUpload {
  file: AsyncIterable<Buffer>;
  filename: string;
  contentType: string;
}

/** What the platform tells of a media file before it is downloaded. */
export interface MediaInfo {
  mimeType: string | null;
  /** In bytes; null when the platform does not say. */
  fileSize: number | null;
}

export interface MediaDownload {
  stream: Readable;
  contentType: string;
  contentLength?: number;
}

/**
 * Aborts a streamed call once it has been idle for `idleMs`: no chunk of the
 * body for that long, or no answer that long after the last. A whole-call
 * timeout would cut off a large file sent at a slow client's pace.
 */
class IdleWatch {
  readonly controller = new AbortController();
  /** Whether the body was sent whole: an abort before that is the client's stall. */
  bodySent = false;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly idleMs: number) {
    this.touch();
  }

  /** Whether it gave up while the client was still to send the body. */
  get clientStalled(): boolean {
    return this.controller.signal.aborted && !this.bodySent;
  }

  touch(): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    this.timer = setTimeout(() => this.controller.abort(), this.idleMs);
  }

  async *watch(body: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of body) {
      this.touch();
      yield chunk;
    }
    this.bodySent = true;
    this.touch();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}

/** The multipart body the platform's /media takes, streamed part by part. */
async function* multipartBody(boundary: string, upload: MediaUpload): AsyncGenerator<Buffer> {
  const field = (name: string, value: string): string =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const filename = upload.filename.replace(/["\r\n]/g, '_');
  yield Buffer.from(
    field('messaging_product', 'messenger') +
      field('type', upload.contentType) +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n` +
      `Content-Type: ${upload.contentType}\r\n\r\n`,
  );
  yield* upload.file;
  yield Buffer.from(`\r\n--${boundary}--\r\n`);
}

/** How platform calls are retried: attempts, and the backoff between them. */
export interface RetryPolicy extends Backoff {
  maxAttempts: number;
}

/** The policy PLATFORM_RETRY_DELAY_MS sets: the first wait, doubling up to 16 times it. */
export function retryPolicy(config: Pick<AppConfig, 'PLATFORM_RETRY_DELAY_MS'>): RetryPolicy {
  return {
    maxAttempts: PLATFORM_MAX_ATTEMPTS,
    baseDelayMs: config.PLATFORM_RETRY_DELAY_MS,
    maxDelayMs: config.PLATFORM_RETRY_DELAY_MS * 16,
  };
}

interface PlatformCall {
  method: 'GET' | 'POST' | 'DELETE';
  /** Path after the version, e.g. `/123/messages`. */
  path: string;
  token: string;
  params?: Record<string, string>;
  data?: unknown;
  /**
   * Whether repeating the call is harmless. A send is not: one that reached
   * the platform and timed out is never repeated, as it could arrive twice.
   */
  idempotent: boolean;
  /** At most this many attempts (a streamed body allows one). */
  attempts?: number;
  headers?: Record<string, string>;
  /** The body of each retry, when it may differ from the first attempt's (read afresh). */
  retryData?: () => Promise<unknown>;
  /** Replaces PLATFORM_TIMEOUT_MS for the whole call (0: none; `signal` then bounds it). */
  timeout?: number;
  signal?: AbortSignal;
}

function segment(id: string): string {
  return encodeURIComponent(id);
}

function retryAfterSeconds(response: AxiosResponse): number | undefined {
  const ms = retryAfterMs(response.headers['retry-after']);
  return ms === undefined ? undefined : Math.ceil(ms / 1000);
}

/** What one attempt came to: either a result or a failure and whether to try again. */
interface FailedAttempt {
  ok: false;
  failure: PlatformFailure;
  retry: boolean;
}
type Attempt<T> = { ok: true; value: T } | FailedAttempt;

/**
 * The only code that knows the platform's URLs and payloads. Every call is
 * bounded by PLATFORM_TIMEOUT_MS per attempt and retried per the lists in
 * platform.errors.ts; failures surface as PlatformError.
 */
@Injectable()
export class PlatformClient implements OnApplicationShutdown {
  private readonly logger = new Logger(PlatformClient.name);
  private readonly http: AxiosInstance;
  private readonly agents = keepAliveAgents(256);
  private readonly httpAgent = this.agents.http;
  private readonly httpsAgent = this.agents.https;
  private readonly retryPolicy: RetryPolicy;

  constructor(
    private readonly config: AppConfig,
    // Optional: unit specs build the client without the metrics module.
    @Optional() @Inject(PLATFORM_CALL_OBSERVER) private readonly observer?: PlatformCallObserver,
  ) {
    this.retryPolicy = retryPolicy(config);
    this.http = axios.create({
      baseURL: `${config.PLATFORM_API_URL.replace(/\/+$/, '')}/${config.PLATFORM_API_VERSION}`,
      timeout: config.PLATFORM_TIMEOUT_MS,
      httpAgent: this.httpAgent,
      httpsAgent: this.httpsAgent,
      maxRedirects: 0,
      validateStatus: () => true,
      transitional: { clarifyTimeoutError: true },
    });
  }

  /** After the HTTP server has drained, so no in-flight call loses its socket. */
  onApplicationShutdown(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  /** Reads a number's details; used to check an access token. */
  getPhoneNumber(phoneNumberId: string, token: string): Promise<PhoneNumberDetails> {
    return this.call<PhoneNumberDetails>({
      method: 'GET',
      path: `/${segment(phoneNumberId)}`,
      token,
      params: { fields: 'display_phone_number,verified_name,quality_rating,messaging_limit_tier' },
      idempotent: true,
    });
  }

  async listPhoneNumbers(channelAccountId: string, token: string): Promise<PhoneNumberRecord[]> {
    const answer = await this.call<{ data?: PhoneNumberRecord[] }>({
      method: 'GET',
      path: `/${segment(channelAccountId)}/phone_numbers`,
      token,
      idempotent: true,
    });
    return answer.data ?? [];
  }

  async register(phoneNumberId: string, token: string, request: RegisterRequest): Promise<void> {
    await this.call({
      method: 'POST',
      path: `/${segment(phoneNumberId)}/register`,
      token,
      data: { messaging_product: 'messenger', pin: request.pin },
      idempotent: true,
    });
  }

  async requestCode(
    phoneNumberId: string,
    token: string,
    request: RequestCodeRequest,
  ): Promise<void> {
    // Not repeated on a timeout: the user would get a second code.
    await this.call({
      method: 'POST',
      path: `/${segment(phoneNumberId)}/request_code`,
      token,
      data: { code_method: request.code_method, language: request.language },
      idempotent: false,
    });
  }

  async verifyCode(phoneNumberId: string, token: string, code: string): Promise<void> {
    await this.call({
      method: 'POST',
      path: `/${segment(phoneNumberId)}/verify_code`,
      token,
      data: { code },
      idempotent: true,
    });
  }

  /**
   * Sends one message; returns its wamid. Never repeated once it may have
   * reached the platform (the platform has no idempotency key). Before a
   * retry, `beforeRetry` (if given) gives the message to send instead: its
   * recipient may have changed meanwhile.
   */
  async sendMessage(
    phoneNumberId: string,
    token: string,
    message: PlatformMessage,
    beforeRetry?: () => Promise<PlatformMessage>,
  ): Promise<string> {
    const answer = await this.call<{ messages?: Array<{ id?: unknown }> }>({
      method: 'POST',
      path: `/${segment(phoneNumberId)}/messages`,
      token,
      data: message,
      idempotent: false,
      retryData: beforeRetry,
    });
    const wamid = answer.messages?.[0]?.id;
    if (typeof wamid !== 'string' || wamid.length === 0) {
      throw new PlatformError({
        kind: 'unavailable',
        platformMessage: 'The platform accepted the message but returned no message id',
        mayHaveBeenSent: true,
      });
    }
    return wamid;
  }

  /**
   * One page of a business account's templates; `after` is the previous
   * page's cursor. `next` is absent on the last page.
   */
  async listTemplates(
    channelAccountId: string,
    token: string,
    after?: string,
  ): Promise<{ templates: PlatformTemplate[]; next?: string }> {
    const answer = await this.call<{
      data?: PlatformTemplate[];
      paging?: { cursors?: { after?: string }; next?: string };
    }>({
      method: 'GET',
      path: `/${segment(channelAccountId)}/message_templates`,
      token,
      params: {
        fields: TEMPLATE_FIELDS,
        limit: String(TEMPLATE_PAGE_SIZE),
        ...(after ? { after } : {}),
      },
      idempotent: true,
    });
    const templates = answer.data ?? [];
    // The platform names a next page only when there is one (`paging.next`).
    const next = answer.paging?.next ? answer.paging.cursors?.after : undefined;
    return { templates, next: templates.length > 0 ? next : undefined };
  }

  /** Submits a template for review; not repeated on a timeout (it could be created twice). */
  async createTemplate(
    channelAccountId: string,
    token: string,
    draft: PlatformTemplateDraft,
  ): Promise<PlatformTemplateCreated> {
    return this.call<PlatformTemplateCreated>({
      method: 'POST',
      path: `/${segment(channelAccountId)}/message_templates`,
      token,
      data: draft,
      idempotent: false,
    });
  }

  /** Deletes a template by name: every language, or the one `templateId` names. */
  async deleteTemplate(
    channelAccountId: string,
    token: string,
    name: string,
    templateId?: string,
  ): Promise<void> {
    await this.call({
      method: 'DELETE',
      path: `/${segment(channelAccountId)}/message_templates`,
      token,
      params: { name, ...(templateId ? { hsm_id: templateId } : {}) },
      idempotent: true,
    });
  }

  /**
   * Sends a marketing template through the platform's marketing messages
   * endpoint (where it delivers marketing best); its wamid. Never repeated
   * once it may have reached the platform, like any send.
   */
  async sendMarketingMessage(
    phoneNumberId: string,
    token: string,
    message: PlatformMessage,
  ): Promise<string> {
    const answer = await this.call<{ messages?: Array<{ id?: unknown }> }>({
      method: 'POST',
      path: `/${segment(phoneNumberId)}/marketing_messages`,
      token,
      data: message,
      idempotent: false,
    });
    const wamid = answer.messages?.[0]?.id;
    if (typeof wamid !== 'string' || wamid.length === 0) {
      throw new PlatformError({
        kind: 'unavailable',
        platformMessage: 'The platform accepted the message but returned no message id',
        mayHaveBeenSent: true,
      });
    }
    return wamid;
  }

  /** Marks a message read and shows the typing indicator while the agent works (best effort). */
  async markReadWithTyping(phoneNumberId: string, token: string, wamid: string): Promise<void> {
    await this.call({
      method: 'POST',
      path: `/${segment(phoneNumberId)}/messages`,
      token,
      data: {
        messaging_product: 'messenger',
        status: 'read',
        message_id: wamid,
        typing_indicator: { type: 'text' },
      },
      idempotent: true,
      attempts: 1,
    });
  }

  /**
   * Uploads a file as it arrives (never held whole in memory); returns the
   * media id. Tried once: a stream cannot be replayed. PLATFORM_TIMEOUT_MS
   * bounds each pause (in the client's body, or before the answer), not the
   * whole upload.
   */
  async uploadMedia(phoneNumberId: string, token: string, upload: MediaUpload): Promise<string> {
    const boundary = `----messaging-connector-${randomUUID()}`;
    const idle = new IdleWatch(this.config.PLATFORM_TIMEOUT_MS);
    const answer = await this.call<{ id?: unknown }>({
      method: 'POST',
      path: `/${segment(phoneNumberId)}/media`,
      token,
      data: Readable.from(idle.watch(multipartBody(boundary, upload))),
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      idempotent: false,
      attempts: 1,
      timeout: 0,
      signal: idle.controller.signal,
    })
      .catch((error: unknown) => {
        // The client stopped sending its file: its fault, not the platform's.
        if (idle.clientStalled) {
          throw new AppException(
            'request_timeout',
            `The upload stopped arriving for ${this.config.PLATFORM_TIMEOUT_MS / 1000} s`,
          );
        }
        throw error;
      })
      .finally(() => idle.stop());
    if (typeof answer.id !== 'string') {
      throw new PlatformError({
        kind: 'unavailable',
        platformMessage: 'no media id in the answer',
      });
    }
    return answer.id;
  }

  /**
   * Streams a media file a user sent. The platform gives a short-lived URL;
   * the token goes there only when it is one of the platform's hosts, and
   * redirects are not followed.
   */
  async downloadMedia(
    mediaId: string,
    token: string,
    phoneNumberId: string,
  ): Promise<MediaDownload> {
    const meta = await this.mediaMeta(mediaId, token, phoneNumberId);
    if (typeof meta.url !== 'string' || !this.isPlatformHost(meta.url)) {
      throw new PlatformError({
        kind: 'unavailable',
        platformMessage: 'the platform gave no media URL on one of its hosts',
      });
    }
    let response: AxiosResponse<Readable>;
    try {
      response = await axios.get<Readable>(meta.url, {
        responseType: 'stream',
        headers: { Authorization: `Bearer ${token}` },
        timeout: this.config.PLATFORM_TIMEOUT_MS,
        maxRedirects: 0,
        validateStatus: () => true,
        httpAgent: this.httpAgent,
        httpsAgent: this.httpsAgent,
      });
    } catch (error) {
      throw new PlatformError(this.networkFailure(error, { idempotent: true }).failure);
    }
    if (response.status !== 200) {
      response.data.destroy();
      throw new PlatformError({
        kind: response.status >= 500 ? 'unavailable' : 'rejected',
        httpStatus: response.status,
        platformMessage: `media download answered HTTP ${response.status}`,
      });
    }
    const length = Number(response.headers['content-length']);
    return {
      stream: response.data,
      contentType:
        String(response.headers['content-type'] ?? '') ||
        (typeof meta.mime_type === 'string' ? meta.mime_type : 'application/octet-stream'),
      contentLength: Number.isFinite(length) ? length : undefined,
    };
  }

  /** A media file's type and size, without downloading it (one call). */
  async mediaInfo(mediaId: string, token: string, phoneNumberId: string): Promise<MediaInfo> {
    const meta = await this.mediaMeta(mediaId, token, phoneNumberId);
    const size = Number(meta.file_size);
    return {
      mimeType: typeof meta.mime_type === 'string' ? meta.mime_type : null,
      fileSize:
        meta.file_size !== undefined && meta.file_size !== null && Number.isFinite(size)
          ? size
          : null,
    };
  }

  /** What the platform says of a media id: its short-lived URL, type and size. */
  private mediaMeta(
    mediaId: string,
    token: string,
    phoneNumberId: string,
  ): Promise<{ url?: unknown; mime_type?: unknown; file_size?: unknown }> {
    // Naming the number makes the platform refuse media of another number under the same token.
    return this.call({
      method: 'GET',
      path: `/${segment(mediaId)}`,
      token,
      params: { phone_number_id: phoneNumberId },
      idempotent: true,
    });
  }

  /**
   * The API's own URL (over its own scheme), or an https URL on a host the
   * platform serves media from: the only places the token may go.
   */
  private isPlatformHost(url: string): boolean {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return false;
    }
    const api = new URL(this.config.PLATFORM_API_URL);
    if (parsed.host === api.host) return parsed.protocol === api.protocol;
    return (
      parsed.protocol === 'https:' &&
      PLATFORM_MEDIA_HOST_SUFFIXES.some(
        (suffix) => parsed.hostname === suffix || parsed.hostname.endsWith(`.${suffix}`),
      )
    );
  }

  /** Any HTTP answer from the platform's base URL means it is reachable. */
  async ping(signal: AbortSignal): Promise<void> {
    await axios.get(this.config.PLATFORM_API_URL, {
      signal,
      timeout: 2000,
      maxRedirects: 0,
      validateStatus: () => true,
      httpAgent: this.httpAgent,
      httpsAgent: this.httpsAgent,
    });
  }

  private async call<T>(first: PlatformCall): Promise<T> {
    const policy = this.retryPolicy;
    let call = first;
    for (let attempt = 1; ; attempt++) {
      if (attempt > 1 && call.retryData) call = { ...call, data: await call.retryData() };
      const outcome = await this.attempt<T>(call);
      if (outcome.ok) return outcome.value;
      const { failure } = outcome;
      const last = !outcome.retry || attempt >= (call.attempts ?? policy.maxAttempts);
      this.logger.warn(
        {
          method: call.method,
          path: call.path,
          attempt,
          status: failure.httpStatus,
          network: failure.networkCode,
          platformCode: failure.platformCode,
          fbtraceId: failure.fbtraceId,
        },
        `platform call failed${last ? '' : ', retrying'}`,
      );
      if (last) throw new PlatformError(failure);
      const wait = Math.max(
        backoffDelay(attempt, policy),
        Math.min((failure.retryAfterSeconds ?? 0) * 1000, policy.maxDelayMs),
      );
      await sleep(wait);
    }
  }

  private async attempt<T>(call: PlatformCall): Promise<Attempt<T>> {
    const endpoint = call.path.replace(/\/[^/]+/, '/{id}');
    const started = performance.now();
    const outcome = await this.attemptOnce<T>(call);
    this.observer?.platformCall({
      endpoint,
      status: outcome.ok
        ? '2xx'
        : String(outcome.failure.httpStatus ?? outcome.failure.networkCode ?? 'error'),
      code: outcome.ok ? '' : String(outcome.failure.platformCode ?? ''),
      seconds: (performance.now() - started) / 1000,
    });
    return outcome;
  }

  private async attemptOnce<T>(call: PlatformCall): Promise<Attempt<T>> {
    let response: AxiosResponse;
    try {
      response = await this.http.request({
        method: call.method,
        url: call.path,
        params: call.params,
        data: call.data,
        headers: { ...call.headers, Authorization: `Bearer ${call.token}` },
        maxBodyLength: Infinity,
        ...(call.timeout === undefined ? {} : { timeout: call.timeout }),
        signal: call.signal,
      });
    } catch (error) {
      return this.networkFailure(error, call);
    }
    if (response.status >= 200 && response.status < 300) {
      return { ok: true, value: response.data as T };
    }
    return this.httpFailure(response);
  }

  private httpFailure(response: AxiosResponse): FailedAttempt {
    const body = (response.data as { error?: PlatformErrorBody } | undefined)?.error;
    const code = typeof body?.code === 'number' ? body.code : undefined;
    const throttled =
      response.status === 429 || (code !== undefined && THROTTLING_PLATFORM_CODES.has(code));
    // The platform's own code says best whether a retry can help; a bare status decides otherwise.
    const retry =
      code !== undefined
        ? RETRYABLE_PLATFORM_CODES.has(code)
        : RETRYABLE_HTTP_STATUSES.has(response.status);
    const kind = throttled ? 'rate_limited' : response.status >= 500 ? 'unavailable' : 'rejected';
    return {
      ok: false,
      retry,
      failure: {
        kind,
        httpStatus: response.status,
        platformCode: code,
        platformMessage: typeof body?.message === 'string' ? body.message : undefined,
        fbtraceId: typeof body?.fbtrace_id === 'string' ? body.fbtrace_id : undefined,
        retryAfterSeconds: throttled ? retryAfterSeconds(response) : undefined,
      },
    };
  }

  private networkFailure(
    error: unknown,
    call: Pick<PlatformCall, 'idempotent' | 'signal'>,
  ): FailedAttempt {
    // A body stream that failed (e.g. an upload over its limit) is the caller's error, not the network's.
    if (error instanceof AppException) throw error;
    if (error instanceof AxiosError && error.cause instanceof AppException) throw error.cause;
    // The idle watch's abort is a timeout: name it as one.
    const code = call.signal?.aborted
      ? 'ETIMEDOUT'
      : error instanceof AxiosError
        ? error.code
        : undefined;
    const neverSent = code !== undefined && NOT_SENT_NETWORK_CODES.has(code);
    const retryable = code !== undefined && RETRYABLE_NETWORK_CODES.has(code);
    return {
      ok: false,
      retry: retryable && (call.idempotent || neverSent),
      failure: {
        kind: 'unavailable',
        networkCode: code,
        // A timeout or a connection cut after the request went out: it may have been acted on.
        mayHaveBeenSent: !call.idempotent && !neverSent,
      },
    };
  }
}
