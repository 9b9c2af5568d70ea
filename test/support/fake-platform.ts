import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  body: unknown;
  /** When the request arrived (ms since epoch). */
  at: number;
}

export interface FakeAnswer {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Never answer (the client must time out). */
  hang?: boolean;
  /** Send `body` as it is (a string), not as JSON. */
  raw?: boolean;
}

type Handler = (request: RecordedRequest) => FakeAnswer;

interface Route {
  method: string;
  path: RegExp;
  answers: Handler[];
  /** The last handler repeats once the others are used up. */
  sticky: boolean;
}

export const VALID_TOKEN = 'EAAG-valid-platform-token-0123456789';

export const NUMBER_DETAILS = {
  display_phone_number: '+55 11 99999-0000',
  verified_name: 'Acme Store',
  quality_rating: 'GREEN',
  messaging_limit_tier: 'TIER_1K',
};

/** What the fake platform serves as a user's media file. */
export const MEDIA_CONTENT = 'fake-jpeg-bytes-0123456789';

export function platformError(code: number, message = 'error', status = 400): FakeAnswer {
  return {
    status,
    body: { error: { message, type: 'OAuthException', code, fbtrace_id: `trace-${code}` } },
  };
}

/**
 * A real HTTP server standing in for the platform: it records every call and
 * answers like the platform (token check, number details, phone numbers),
 * unless a test scripts other answers with `on()`.
 */
export class FakePlatform {
  readonly requests: RecordedRequest[] = [];
  private readonly routes: Route[] = [];
  private readonly hanging = new Set<ServerResponse>();
  private sent = 0;
  private uploads = 0;
  private server: Server;
  url: string;

  static async start(): Promise<FakePlatform> {
    const platform = new FakePlatform();
    platform.server = createServer((req, res) => {
      // A client that gives up mid-upload (a body over its limit) is normal here.
      platform.handle(req, res).catch(() => res.destroy());
    });
    platform.server.listen(0, '127.0.0.1');
    await once(platform.server, 'listening');
    platform.url = `http://127.0.0.1:${(platform.server.address() as AddressInfo).port}`;
    return platform;
  }

  /** Scripts answers for matching calls: each answer is used once, the last one repeats. */
  on(method: string, path: RegExp, ...answers: Array<FakeAnswer | Handler>): void {
    this.routes.unshift({
      method,
      path,
      answers: answers.map((answer) => (typeof answer === 'function' ? answer : () => answer)),
      sticky: true,
    });
  }

  reset(): void {
    this.routes.length = 0;
    this.requests.length = 0;
    this.releaseHanging();
  }

  /** The message objects posted to /{phone_number_id}/messages, in order. */
  sentMessages(): Array<Record<string, unknown>> {
    return this.callsTo(/\/messages$/).map((request) => request.body as Record<string, unknown>);
  }

  callsTo(path: RegExp): RecordedRequest[] {
    return this.requests.filter((request) => path.test(request.path));
  }

  async stop(): Promise<void> {
    this.releaseHanging();
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }

  private releaseHanging(): void {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = Date.now();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const bytes = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://platform');
    // JSON bodies parsed; anything else (multipart uploads) kept byte for byte as latin1 text.
    let body: unknown;
    if (bytes.length > 0) {
      try {
        body = JSON.parse(bytes.toString('utf8'));
      } catch {
        body = bytes.toString('latin1');
      }
    }
    const request: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body,
      at,
    };
    this.requests.push(request);
    const answer = this.answer(request);
    if (answer.hang) {
      this.hanging.add(res);
      return;
    }
    if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
    res.writeHead(answer.status ?? 200, {
      'content-type': 'application/json',
      ...(answer.headers ?? {}),
    });
    res.end(answer.raw ? (answer.body as string) : JSON.stringify(answer.body ?? {}));
  }

  private answer(request: RecordedRequest): FakeAnswer {
    const route = this.routes.find(
      (candidate) => candidate.method === request.method && candidate.path.test(request.path),
    );
    if (route) {
      const handler = route.answers.length > 1 ? route.answers.shift()! : route.answers[0];
      return handler(request);
    }
    return this.defaultAnswer(request);
  }

  /** What the real platform answers: a valid token gets data, any other gets code 190. */
  private defaultAnswer(request: RecordedRequest): FakeAnswer {
    if (request.path === '/' || request.path === '') return { status: 400, body: {} };
    if (request.headers.authorization !== `Bearer ${VALID_TOKEN}`) {
      return platformError(190, 'Invalid OAuth access token', 401);
    }
    const [, version, id, action] = request.path.split('/');
    if (request.method === 'GET' && version === 'files') {
      return { body: MEDIA_CONTENT, headers: { 'content-type': 'image/jpeg' }, raw: true };
    }
    if (request.method === 'GET' && !action && id.startsWith('media-')) {
      return {
        body: {
          id,
          url: `${this.url}/files/${id}`,
          mime_type: 'image/jpeg',
          file_size: MEDIA_CONTENT.length,
        },
      };
    }
    if (request.method === 'GET' && !action) return { body: { id, ...NUMBER_DETAILS } };
    if (request.method === 'POST' && action === 'media') {
      return { body: { id: `media-${++this.uploads}` } };
    }
    if (request.method === 'GET' && action === 'phone_numbers') {
      return {
        body: {
          data: [
            { id: '106540352242922', code_verification_status: 'VERIFIED', ...NUMBER_DETAILS },
          ],
        },
      };
    }
    if (request.method === 'POST' && action === 'messages') {
      const to = (request.body as { to?: string } | undefined)?.to;
      return {
        body: {
          messaging_product: 'messenger',
          contacts: [{ input: to, wa_id: to }],
          messages: [{ id: `wamid.fake${++this.sent}` }],
        },
      };
    }
    if (request.method === 'POST' && ['register', 'request_code', 'verify_code'].includes(action)) {
      return { body: { success: true } };
    }
    return platformError(100, 'Unsupported request', 400);
  }
}
