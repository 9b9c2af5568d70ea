import { http, useTestService, type TestApp } from './support/test-app.js';

describe('error answers and request ids', () => {
  const context = useTestService();
  let service: TestApp;

  beforeAll(() => {
    ({ service } = context);
  });

  const login = (rawBody: string, headers: Record<string, string> = {}) =>
    http(service.url, 'POST', '/admin/auth/login', { rawBody, headers });

  it('answers malformed JSON with 400 invalid_json in the contract body', async () => {
    const answer = await login('{"username": "admin", ');
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      code: 'invalid_json',
      message: expect.any(String),
    });
    expect((await login('')).body).toMatchObject({ code: 'invalid_json' });
  });

  it('answers an unknown route with 404 not_found', async () => {
    const answer = await http(service.url, 'GET', '/no/such/route');
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({
      statusCode: 404,
      error: 'Not Found',
      code: 'not_found',
      message: expect.stringContaining('/no/such/route'),
    });
  });

  it('answers a body over 5 MB with 413 payload_too_large', async () => {
    const answer = await login(JSON.stringify({ username: 'a'.repeat(5 * 1024 * 1024 + 10) }));
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ code: 'payload_too_large' });
  });

  it('answers an unsupported content type with 415 unsupported_media_type', async () => {
    const answer = await login('username=admin', { 'content-type': 'application/xml' });
    expect(answer.status).toBe(415);
    expect(answer.body).toMatchObject({ code: 'unsupported_media_type' });
  });

  it('names every failing field, nested ones with their path', async () => {
    const answer = await http<{
      message: string;
      details: Array<{ field: string; message: string }>;
    }>(service.url, 'POST', '/admin/auth/login', {
      body: { username: 7, password: ['x'], surprise: true },
    });
    expect(answer.status).toBe(400);
    const fields = answer.body.details.map((d) => d.field);
    expect(new Set(fields)).toEqual(new Set(['username', 'password', 'surprise']));
    for (const detail of answer.body.details) expect(answer.body.message).toContain(detail.field);
  });

  it('echoes a given x-request-id and makes one otherwise, on success and error alike', async () => {
    const given = await http(service.url, 'GET', '/health/live', {
      headers: { 'x-request-id': 'trace-abc.123' },
    });
    expect(given.headers.get('x-request-id')).toBe('trace-abc.123');
    const made = await http(service.url, 'GET', '/nowhere');
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const unsafe = await http(service.url, 'GET', '/health/live', {
      headers: { 'x-request-id': 'bad id with spaces' },
    });
    expect(unsafe.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const failing = await login('{', { 'x-request-id': 'req-7' });
    expect(failing.headers.get('x-request-id')).toBe('req-7');
  });

  it('never sends a stack trace', async () => {
    for (const answer of [await login('{'), await http(service.url, 'GET', '/x')]) {
      expect(answer.text).not.toMatch(/stack|at .*\.js:\d+/);
    }
  });
});
