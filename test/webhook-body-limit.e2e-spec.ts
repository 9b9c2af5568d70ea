import { once } from 'node:events';
import { request } from 'node:http';
import { connect } from 'node:net';
import {
  WEBHOOK_BODY_LIMIT_BYTES,
  WEBHOOK_REFUSED_DISCARD_BYTES,
} from '../src/webhook/webhook.controller.js';
import { webhookSignature } from './support/fake-platform.js';
import { APP_SECRET, http, useTestService, type TestApp } from './support/test-app.js';

const MB = 1024 * 1024;

interface Outcome {
  status?: number;
  body?: string;
  /** The client's error (EPIPE, ECONNRESET) while it sent or read, if any. */
  error?: string;
}

/**
 * POSTs `body` with node:http on a fresh connection, writing all of it as an
 * ordinary client does, and reads the answer.
 */
async function post(port: number, body: Buffer, headers: Record<string, string>): Promise<Outcome> {
  const outcome: Outcome = {};
  const req = request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/webhooks/messenger',
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': body.length, ...headers },
  });
  req.on('error', (error: NodeJS.ErrnoException) => (outcome.error ??= error.code));
  req.on('response', (res) => {
    outcome.status = res.statusCode;
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => (text += chunk));
    res.on('end', () => (outcome.body = text));
    res.on('error', (error: NodeJS.ErrnoException) => (outcome.error ??= error.code));
  });
  // Not events.once: it would reject on the 'error' the outcome records.
  const closed = new Promise((resolve) => req.on('close', resolve));
  req.end(body);
  await closed;
  return outcome;
}

interface Endless {
  /** The route, the webhook's unless said. */
  path?: string;
  signature?: string;
  /** The declared Content-Length, or chunked when undefined. */
  declared: number | undefined;
  /** Bytes to send at most. */
  max: number;
  /** A pause after each chunk (a slow sender), or none. */
  pauseMs?: number;
  /** Bytes in each chunk: 64 KB unless said. */
  chunkBytes?: number;
}

/**
 * Sends a body on a raw connection, chunk after chunk while the server reads
 * (or with a pause between chunks), up to `max` bytes. How much was written
 * before the server closed the connection, whether it did, and what it answered.
 */
async function endless(
  port: number,
  {
    path = '/webhooks/messenger',
    signature = 'sha256=00',
    declared,
    max,
    pauseMs,
    chunkBytes,
  }: Endless,
): Promise<{ written: number; cut: boolean; answer: string }> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.on('error', () => undefined);
  let answer = '';
  socket.on('data', (data: Buffer) => (answer += data.toString('latin1')));
  const closed = new Promise<boolean>((resolve) => socket.on('close', () => resolve(true)));
  const framing =
    declared === undefined ? 'Transfer-Encoding: chunked' : `Content-Length: ${declared}`;
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
      `x-hub-signature-256: ${signature}\r\n${framing}\r\n\r\n`,
  );
  const chunk = Buffer.alloc(chunkBytes ?? 64 * 1024, 0x20);
  const framed =
    declared === undefined
      ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])
      : chunk;
  let written = 0;
  let cut = false;
  let isClosed = false;
  void closed.then(() => (isClosed = true));
  while (written < max && !socket.destroyed && !isClosed) {
    written += chunk.length;
    if (!socket.write(framed)) {
      const drained = new Promise<boolean>((resolve) => socket.once('drain', () => resolve(false)));
      cut = await Promise.race([drained, closed]);
      if (cut) break;
    }
    if (pauseMs) {
      cut = await Promise.race([
        closed,
        new Promise<boolean>((r) => setTimeout(r, pauseMs, false)),
      ]);
      if (cut) break;
    }
  }
  if (!cut) {
    // Everything written: the server either cuts it now or was reading it whole.
    socket.end();
    cut = await closed;
  }
  socket.destroy();
  return { written, cut, answer };
}

describe('webhook: an oversized delivery is answered 413, and its sender reads it', () => {
  const context = useTestService({ env: { APP_ROLE: 'api' } });
  let service: TestApp;
  let port: number;

  beforeAll(() => {
    service = context.service;
    port = Number(new URL(service.url).port);
  });

  it('answers a 6 MB signed delivery 413 payload_too_large, twenty times in a row, never EPIPE', async () => {
    const body = Buffer.from(
      JSON.stringify({ object: 'messenger_business_account', entry: [], pad: 'z'.repeat(6 * MB) }),
    );
    expect(body.length).toBeGreaterThan(WEBHOOK_BODY_LIMIT_BYTES);
    const signature = webhookSignature(body.toString(), APP_SECRET);
    const outcomes: Outcome[] = [];
    for (let i = 0; i < 20; i++) {
      outcomes.push(await post(port, body, { 'x-hub-signature-256': signature }));
    }
    const summary = outcomes.map(({ status, error, body: text }) => ({
      status,
      error,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
    }));
    expect(summary).toEqual(
      Array.from({ length: 20 }, () => ({
        status: 413,
        error: undefined,
        body: {
          statusCode: 413,
          error: 'Payload Too Large',
          code: 'payload_too_large',
          message: "The request body is over this route's limit of 5 MB",
        },
      })),
    );
    // The service still takes a delivery of the right size afterwards.
    const small = Buffer.from(JSON.stringify({ object: 'messenger_business_account', entry: [] }));
    const ok = await post(port, small, {
      'x-hub-signature-256': webhookSignature(small.toString(), APP_SECRET),
    });
    expect({ status: ok.status, error: ok.error }).toEqual({ status: 200, error: undefined });
    // A type no route takes is refused before the body is read, and answered the same way.
    const xml = await post(port, body, { 'content-type': 'application/xml' });
    expect({ status: xml.status, error: xml.error }).toEqual({ status: 415, error: undefined });
  });

  it("says each route's own limit in its 413", async () => {
    const login = await http(service.url, 'POST', '/admin/auth/login', {
      rawBody: JSON.stringify({ username: 'admin', password: 'x', pad: 'y'.repeat(70 * 1024) }),
    });
    expect(login.status).toBe(413);
    expect(login.body).toMatchObject({
      code: 'payload_too_large',
      message: "The request body is over this route's limit of 64 KB",
    });
  });

  it('cuts off a body far beyond what it reads to discard, declared or chunked', async () => {
    const max = WEBHOOK_REFUSED_DISCARD_BYTES * 4;
    // Declared too long to discard: cut without reading it.
    const declared = await endless(port, { declared: max, max });
    expect(declared.cut).toBe(true);
    expect(declared.written).toBeLessThan(max);
    // Chunked, so its length is unknown: read up to the discard limit, then cut.
    const chunked = await endless(port, { declared: undefined, max });
    expect(chunked.cut).toBe(true);
    expect(chunked.written).toBeLessThan(max);
  });

  it('answers a 413 on a 64 KB route and closes the connection without reading the body', async () => {
    // A slow sender of a 10 MB body to the login: answered at once, its
    // connection closed, having sent a small part of it.
    const declared = 10 * MB;
    const slow = await endless(port, {
      path: '/admin/auth/login',
      declared,
      max: declared,
      chunkBytes: 16 * 1024,
      pauseMs: 5,
    });
    expect(slow.answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(slow.answer).toContain("over this route's limit of 64 KB");
    expect(slow.cut).toBe(true);
    expect(slow.written).toBeLessThan(declared / 4);
  });

  it('cuts off a refused delivery that drips its bytes, at the discard deadline', async () => {
    // Declared 6 MB (over the limit, within what the webhook would discard),
    // sent at about 160 KB/s: it would take 40 s to send it all.
    const declared = 6 * MB;
    expect(declared).toBeLessThan(WEBHOOK_REFUSED_DISCARD_BYTES);
    const dripping = await endless(port, {
      declared,
      max: declared,
      chunkBytes: 16 * 1024,
      pauseMs: 100,
    });
    expect(dripping.answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(dripping.cut).toBe(true);
    expect(dripping.written).toBeLessThan(declared / 2);
  }, 120_000);
});
