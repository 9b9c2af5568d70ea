import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { MEDIA_CONTENT, VALID_TOKEN, type FakePlatform } from './support/fake-platform.js';
import {
  adminToken,
  createApiKey,
  createInstance,
  http,
  useTestService,
  type TestApp,
} from './support/test-app.js';

const KEY = 'global-media-key-0123456789';
const PHONE_NUMBER_ID = '600000000001';

function form(
  fields: Record<string, string>,
  file?: { bytes: Buffer; type: string; name: string },
) {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields)) data.append(name, value);
  if (file) data.append('file', new Blob([file.bytes], { type: file.type }), file.name);
  return data;
}

describe('media upload and download', () => {
  const context = useTestService({ env: { API_KEY: KEY } });
  let platform: FakePlatform;
  let service: TestApp;
  let instanceId: string;
  let token: string;

  const upload = async (
    body: FormData | string,
    headers: Record<string, string> = {},
    key = KEY,
  ) => {
    const response = await fetch(`${service.url}/media/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, ...headers },
      body,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    ({ platform, service } = context);
    token = await adminToken(service.url);
    instanceId = await createInstance(service.url, token, PHONE_NUMBER_ID, 'Media');
  });

  beforeEach(() => platform.reset());

  it('streams an upload to the platform as its multipart body and answers the media id', async () => {
    const bytes = randomBytes(256 * 1024);
    const answer = await upload(
      form({ instance_id: instanceId }, { bytes, type: 'image/jpeg', name: 'photo.jpg' }),
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ id: 'media-1' });
    const [call] = platform.callsTo(/\/media$/);
    expect(call.path).toBe('/v25.0/600000000001/media');
    expect(call.headers.authorization).toBe(`Bearer ${VALID_TOKEN}`);
    expect(call.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const body = Buffer.from(call.body as string, 'latin1');
    const text = body.toString('latin1');
    expect(text).toMatch(/name="messaging_product"\r\n\r\nmessenger\r\n/);
    expect(text).toMatch(/name="type"\r\n\r\nimage\/jpeg\r\n/);
    expect(text).toMatch(/name="file"; filename="photo.jpg"\r\nContent-Type: image\/jpeg/);
    expect(body.includes(bytes)).toBe(true);
  });

  it('takes the instance from a bound key when the form names none', async () => {
    const boundKey = await createApiKey(service.url, token, instanceId, 'bound');
    const answer = await upload(
      form({}, { bytes: Buffer.from('RIFFxxxxWEBP'), type: 'image/webp', name: 's.webp' }),
      {},
      boundKey,
    );
    expect(answer.status).toBe(200);
  });

  it('refuses a file over its type limit with 413 before any upstream call', async () => {
    const answer = await upload(
      form(
        { instance_id: instanceId },
        { bytes: Buffer.alloc(5 * 1024 * 1024 + 1), type: 'image/png', name: 'big.png' },
      ),
    );
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({
      code: 'payload_too_large',
      message: expect.stringContaining('5 MB'),
    });
    const sticker = await upload(
      form(
        { instance_id: instanceId },
        { bytes: Buffer.alloc(600 * 1024), type: 'image/webp', name: 'big.webp' },
      ),
    );
    expect(sticker.status).toBe(413);
    expect(sticker.body.message).toContain('500 KB');
    expect(platform.callsTo(/\/media$/)).toHaveLength(0);
  });

  it('cuts off a chunked upload that turns out too large, answering 413', async () => {
    const boundary = 'xyzBOUNDARY';
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${service.url}/media/upload`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${KEY}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'transfer-encoding': 'chunked',
        },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write(
        `--${boundary}\r\nContent-Disposition: form-data; name="instance_id"\r\n\r\n${instanceId}\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="s.webp"\r\nContent-Type: image/webp\r\n\r\n`,
      );
      const chunk = Buffer.alloc(64 * 1024);
      let sent = 0;
      const pump = (): void => {
        while (sent < 700 * 1024) {
          sent += chunk.length;
          if (!req.write(chunk)) {
            req.once('drain', pump);
            return;
          }
        }
        req.end(`\r\n--${boundary}--\r\n`);
      };
      pump();
    });
    expect(status).toBe(413);
  });

  it('takes an upload slower than PLATFORM_TIMEOUT_MS when no pause in it is that long', async () => {
    // The test service's platform timeout is 1 s: this client sends for about 2 s, in steps of 100 ms.
    const boundary = 'slowBOUNDARY';
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${service.url}/media/upload`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${KEY}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'transfer-encoding': 'chunked',
        },
      });
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.write(
        `--${boundary}\r\nContent-Disposition: form-data; name="instance_id"\r\n\r\n${instanceId}\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
      );
      let steps = 0;
      const step = (): void => {
        if (steps++ < 20) {
          req.write(Buffer.alloc(1024, steps));
          setTimeout(step, 100);
        } else {
          req.end(`\r\n--${boundary}--\r\n`);
        }
      };
      step();
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ id: expect.stringMatching(/^media-\d+$/) });
    const [call] = platform.callsTo(/\/media$/);
    expect(Buffer.from(call.body as string, 'latin1').includes(Buffer.alloc(1024, 20))).toBe(true);
  });

  it('gives up on an upload whose client stops sending for longer than PLATFORM_TIMEOUT_MS', async () => {
    const boundary = 'stallBOUNDARY';
    const req = httpRequest(`${service.url}/media/upload`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${KEY}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'transfer-encoding': 'chunked',
      },
    });
    const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
    });
    req.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="instance_id"\r\n\r\n${instanceId}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.jpg"\r\nContent-Type: image/jpeg\r\n\r\n` +
        'first bytes',
    );
    // Never another byte: the service gives up after 1 s (it then waits up to
    // 10 s for the rest of the refused body before it answers).
    const answer = await answered;
    req.destroy();
    // The client's fault, not the platform's.
    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.body)).toMatchObject({
      code: 'request_timeout',
      message: 'The upload stopped arriving for 1 s',
    });
  });

  it('refuses a type the platform does not take with 415, before any upstream call', async () => {
    const answer = await upload(
      form(
        { instance_id: instanceId },
        { bytes: Buffer.from('GIF89a'), type: 'image/gif', name: 'a.gif' },
      ),
    );
    expect(answer.status).toBe(415);
    expect(answer.body).toMatchObject({ code: 'unsupported_media_type' });
    const notMultipart = await upload('{"file":"x"}', { 'content-type': 'application/json' });
    expect(notMultipart.status).toBe(415);
    expect(platform.requests).toHaveLength(0);
  });

  it('refuses a form without a file or without an instance', async () => {
    expect((await upload(form({ instance_id: instanceId }))).status).toBe(400);
    const noInstance = await upload(
      form({}, { bytes: Buffer.from('x'), type: 'image/jpeg', name: 'a.jpg' }),
    );
    expect(noInstance.status).toBe(400);
    expect(noInstance.body).toMatchObject({ details: [{ field: 'instance_id' }] });
  });

  it('streams a media file back with its content type, the token going to the platform only', async () => {
    const response = await fetch(`${service.url}/media/media-7?instance_id=${instanceId}`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/jpeg');
    // Saved, never rendered: a user's file must not run as a page.
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="media-7"');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await response.text()).toBe(MEDIA_CONTENT);
    const [meta, file] = platform.requests;
    expect(meta.path).toBe('/v25.0/media-7');
    // The platform is asked for this instance's number: another number's media is refused there.
    expect(meta.query).toEqual({ phone_number_id: PHONE_NUMBER_ID });
    expect(file.path).toBe('/files/media-7');
    expect(file.headers.authorization).toBe(`Bearer ${VALID_TOKEN}`);
  });

  it('tells a media file’s type and size with one platform call, no download', async () => {
    const info = await http(service.url, 'GET', `/media/media-10/info?instance_id=${instanceId}`, {
      token: KEY,
    });
    expect(info.status).toBe(200);
    expect(info.body).toEqual({
      id: 'media-10',
      mime_type: 'image/jpeg',
      file_size: MEDIA_CONTENT.length,
    });
    expect(platform.requests.map((r) => r.path)).toEqual(['/v25.0/media-10']);
    expect(platform.requests[0].query).toEqual({ phone_number_id: PHONE_NUMBER_ID });
    // A size the platform leaves out is null.
    platform.on('GET', /^\/v25\.0\/media-11$/, {
      body: { url: 'x', mime_type: 'application/pdf' },
    });
    const unsized = await http(
      service.url,
      'GET',
      `/media/media-11/info?instance_id=${instanceId}`,
      {
        token: KEY,
      },
    );
    expect(unsized.body).toEqual({ id: 'media-11', mime_type: 'application/pdf', file_size: null });
    const bad = await http(service.url, 'GET', `/media/a%20b/info?instance_id=${instanceId}`, {
      token: KEY,
    });
    expect(bad.status).toBe(400);
  });

  it('sends the token to a media host over https only', async () => {
    platform.on('GET', /^\/v25\.0\/media-8$/, {
      body: {
        url: 'http://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=8',
        mime_type: 'image/jpeg',
      },
    });
    const answer = await http(service.url, 'GET', `/media/media-8?instance_id=${instanceId}`, {
      token: KEY,
    });
    expect(answer.status).toBe(502);
    expect(platform.requests).toHaveLength(1);
  });

  it('does not follow a media URL off the platform hosts', async () => {
    platform.on('GET', /^\/v25\.0\/media-9$/, {
      body: { url: 'http://collector.invalid/steal', mime_type: 'image/jpeg' },
    });
    const answer = await http(service.url, 'GET', `/media/media-9?instance_id=${instanceId}`, {
      token: KEY,
    });
    expect(answer.status).toBe(502);
    expect(platform.requests).toHaveLength(1);
  });
});
