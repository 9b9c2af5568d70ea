import { once } from 'node:events';
import { connect } from 'node:net';
import {
  adminToken,
  createApiKey,
  createInstance,
  http,
  useTestService,
  type TestApp,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352200601';

/** Whether `text` holds a whole HTTP answer (headers and a Content-Length body). */
function complete(text: string): boolean {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const length = /content-length: (\d+)/i.exec(text.slice(0, end));
  return length !== null && text.length >= end + 4 + Number(length[1]);
}

/**
 * Sends raw bytes on a fresh connection, as an ordinary client does (it keeps
 * the connection open until it has read the answer), and returns the answer.
 */
async function rawExchange(
  port: number,
  head: string,
  body: Buffer,
  chunkSize = 64 * 1024,
): Promise<{ answer: string; writeError?: string }> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let answer = '';
  let writeError: string | undefined;
  const closed = once(socket, 'close');
  socket.on('data', (chunk: Buffer) => {
    answer += chunk.toString('latin1');
    if (complete(answer)) socket.destroy();
  });
  socket.on('error', (error: NodeJS.ErrnoException) => (writeError = error.code));
  socket.write(head);
  for (let offset = 0; offset < body.length && !socket.destroyed; offset += chunkSize) {
    if (!socket.write(body.subarray(offset, offset + chunkSize))) {
      await Promise.race([once(socket, 'drain'), closed]);
    }
  }
  await closed;
  return { answer, writeError };
}

describe('hostile and malformed input gets a 400 or 413 in the contract body, never a 500', () => {
  const context = useTestService();
  let service: TestApp;
  let key: string;
  let port: number;

  beforeAll(async () => {
    ({ service } = context);
    port = Number(new URL(service.url).port);
    const jwt = await adminToken(service.url);
    const instanceId = await createInstance(service.url, jwt, PHONE_NUMBER_ID);
    key = await createApiKey(service.url, jwt, instanceId, 'hardening');
  });

  it('limits JSON bodies to 64 KB, except the webhook, which takes 5 MB', async () => {
    const big = JSON.stringify({ username: 'admin', password: 'x', junk: 'y'.repeat(70 * 1024) });
    const login = await http(service.url, 'POST', '/admin/auth/login', { rawBody: big });
    expect(login.status).toBe(413);
    expect(login.body).toMatchObject({ code: 'payload_too_large' });

    // A 4 MB delivery is read (and refused only for its signature).
    const delivery = JSON.stringify({ object: 'x', entry: [], pad: 'z'.repeat(4 * 1024 * 1024) });
    const webhook = await http(service.url, 'POST', '/webhooks/messenger', {
      rawBody: delivery,
      headers: { 'x-hub-signature-256': 'sha256=00' },
    });
    expect(webhook.status).toBe(401);
    const tooBig = await http(service.url, 'POST', '/webhooks/messenger', {
      rawBody: JSON.stringify({ pad: 'z'.repeat(6 * 1024 * 1024) }),
    });
    expect(tooBig.status).toBe(413);
  });

  it('refuses unknown fields by name, before converting the body', async () => {
    const answer = await http(service.url, 'POST', '/admin/auth/login', {
      body: { username: 'admin', password: 'x', extra: { deep: [1, 2, 3] }, more: 1 },
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      code: 'validation_failed',
      details: [
        { field: 'extra', message: 'is not an accepted field' },
        { field: 'more', message: 'is not an accepted field' },
      ],
    });
  });

  it('answers 400 for a body nested thousands of levels deep', async () => {
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    for (const [path, token] of [
      ['/admin/auth/login', undefined],
      ['/send/text', key],
    ] as const) {
      const answer = await http(service.url, 'POST', path, {
        rawBody: `{"username":${deep}}`,
        token,
      });
      expect({ path, status: answer.status, code: (answer.body as { code: string }).code }).toEqual(
        { path, status: 400, code: 'validation_failed' },
      );
    }
  });

  it('answers 400 for a NUL or control character in a verify token, a wamid or an id', async () => {
    const cases: Array<[string, string | undefined]> = [
      ['/webhooks/messenger?hub.mode=subscribe&hub.verify_token=%00abc&hub.challenge=1', undefined],
      ['/messages/wamid.%00x', key],
      ['/media/abc%01def', key],
      ['/admin/instances/%00', undefined],
    ];
    const jwt = await adminToken(service.url);
    for (const [path, token] of cases) {
      const answer = await http(service.url, 'GET', path, { token: token ?? jwt });
      expect({ path, status: answer.status, code: (answer.body as { code: string }).code }).toEqual(
        { path, status: 400, code: 'validation_failed' },
      );
    }
  });

  it('answers 400 for a broken multipart body', async () => {
    const boundary = 'broken-boundary';
    const body = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.jpg"\r\n` +
        'Content-Type: image/jpeg\r\n\r\nnot finished',
    );
    const { answer } = await rawExchange(
      port,
      `POST /media/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\n` +
        `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      body,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"code":"validation_failed"');
  });

  it('answers a refused upload to a client that is still sending it', async () => {
    // A sticker over its 500 KB, and an unsupported type, each sent in full; larger
    // than the sockets buffer, so an early close would cut the client off mid-write.
    for (const [type, size, status] of [
      ['image/webp', 600 * 1024, 413],
      ['image/webp', 12 * 1024 * 1024, 413],
      ['application/x-msdownload', 12 * 1024 * 1024, 415],
    ] as const) {
      for (let attempt = 0; attempt < 3; attempt++) {
        const boundary = 'upload-boundary';
        const body = Buffer.concat([
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f"\r\n` +
              `Content-Type: ${type}\r\n\r\n`,
          ),
          Buffer.alloc(size, 1),
          Buffer.from(`\r\n--${boundary}--\r\n`),
        ]);
        const { answer, writeError } = await rawExchange(
          port,
          `POST /media/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
            `Content-Type: multipart/form-data; boundary=${boundary}\r\n` +
            `Content-Length: ${body.length}\r\n\r\n`,
          body,
          16 * 1024,
        );
        expect({ type, attempt, writeError, head: answer.split('\r\n')[0] }).toEqual({
          type,
          attempt,
          writeError: undefined,
          head: `HTTP/1.1 ${status} ${status === 413 ? 'Payload Too Large' : 'Unsupported Media Type'}`,
        });
      }
    }
  });
});
