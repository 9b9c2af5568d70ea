import type { ArgumentsHost } from '@nestjs/common';
import { BadRequestException, Logger, NotFoundException } from '@nestjs/common';
import { AllExceptionsFilter } from './all-exceptions.filter.js';
import { AppException } from './app.exception.js';

interface Sent {
  status?: number;
  headers: Record<string, string>;
  body?: Record<string, unknown>;
}

function hostFor(sent: Sent, url = '/x', route?: string): ArgumentsHost {
  const reply = {
    status(code: number) {
      sent.status = code;
      return reply;
    },
    headers(values: Record<string, string>) {
      Object.assign(sent.headers, values);
      return reply;
    },
    type() {
      return reply;
    },
    send(body: Record<string, unknown>) {
      sent.body = body;
      return reply;
    },
  };
  const request = { id: 'req-1', method: 'GET', url, routeOptions: { url: route } };
  return {
    switchToHttp: () => ({ getResponse: () => reply, getRequest: () => request }),
  } as unknown as ArgumentsHost;
}

function filter(exception: unknown, url?: string, route?: string): Sent {
  const sent: Sent = { headers: {} };
  new AllExceptionsFilter().catch(exception, hostFor(sent, url, route));
  return sent;
}

describe('AllExceptionsFilter', () => {
  it('answers an unexpected error with 500 internal_error and no detail of it', () => {
    const sent = filter(new Error('connection string postgres://user:secret@db leaked'));
    expect(sent.status).toBe(500);
    expect(sent.body).toEqual({
      statusCode: 500,
      error: 'Internal Server Error',
      code: 'internal_error',
      message: 'Internal server error',
    });
  });

  it('answers a thrown non-error with 500 too', () => {
    expect(filter('boom').status).toBe(500);
  });

  it('keeps a domain exception code, details and headers', () => {
    const sent = filter(
      new AppException('rate_limited', 'slow down', undefined, { 'retry-after': '30' }),
    );
    expect(sent.status).toBe(429);
    expect(sent.headers).toEqual({ 'retry-after': '30' });
    expect(sent.body).toMatchObject({ code: 'rate_limited', error: 'Too Many Requests' });
    const validation = filter(
      AppException.validation([{ field: 'to', message: 'must be digits' }]),
    );
    expect(validation.body).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      code: 'validation_failed',
      message: 'to: must be digits',
      details: [{ field: 'to', message: 'must be digits' }],
    });
  });

  it('maps framework HTTP exceptions by status', () => {
    expect(filter(new NotFoundException('Cannot GET /x')).body).toMatchObject({
      statusCode: 404,
      code: 'not_found',
      message: 'Cannot GET /x',
    });
    expect(filter(new BadRequestException('bad')).body).toMatchObject({
      code: 'validation_failed',
    });
  });

  it('answers 503 with Retry-After when PostgreSQL or Redis cannot be reached', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
      code: 'ECONNREFUSED',
    });
    for (const error of [
      refused,
      Object.assign(new Error('query failed'), { driverError: refused }),
      new Error('timeout exceeded when trying to connect'),
      new Error('Connection terminated unexpectedly'),
      Object.assign(new Error('the database system is shutting down'), { code: '57P03' }),
      new Error("Stream isn't writeable and enableOfflineQueue options is false"),
    ]) {
      const sent = filter(error);
      expect({ error: error.message, status: sent.status }).toEqual({
        error: error.message,
        status: 503,
      });
      expect(sent.body).toMatchObject({ code: 'unavailable' });
      expect(sent.headers).toEqual({ 'retry-after': '5' });
    }
  });

  it('logs a 5xx with the path only, never the query string', () => {
    const lines: string[] = [];
    Logger.overrideLogger({
      log: () => undefined,
      warn: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
      error: (...parts: unknown[]) => lines.push(JSON.stringify(parts)),
    });
    try {
      filter(new Error('boom'), '/webhooks/messenger?hub.verify_token=the-secret-token');
    } finally {
      Logger.overrideLogger(false);
    }
    expect(lines.join('\n')).toContain('/webhooks/messenger');
    expect(lines.join('\n')).not.toContain('the-secret-token');
  });

  it('answers 400 to a value PostgreSQL refused (a data exception), logged as an error with its stack frames and without the value', () => {
    const errors: string[] = [];
    const warnings: string[] = [];
    Logger.overrideLogger({
      log: () => undefined,
      warn: (...parts: unknown[]) => warnings.push(JSON.stringify(parts)),
      debug: () => undefined,
      verbose: () => undefined,
      error: (...parts: unknown[]) => errors.push(JSON.stringify(parts)),
    });
    const refused = (code: string, message: string) =>
      Object.assign(new Error(message), { code, severity: 'ERROR' });
    const states = ['22007', '22008', '22003', '22P02'];
    try {
      for (const error of [
        // As TypeORM wraps it (QueryFailedError keeps the driver's error) and as pg raises it.
        Object.assign(new Error('invalid input syntax for type timestamp: "sk_live_X"'), {
          driverError: refused('22007', 'invalid input syntax for type timestamp: "sk_live_X"'),
        }),
        refused('22008', 'date/time field value out of range: "+275760-09-13"'),
        refused('22003', 'value "99999999999999999999" is out of range for type bigint'),
        refused('22P02', 'invalid input syntax for type uuid: "sk_live_X"'),
      ]) {
        const sent = filter(error, '/contacts?cursor=sk_live_X', '/contacts');
        expect(sent.status).toBe(400);
        expect(sent.body).toEqual({
          statusCode: 400,
          error: 'Bad Request',
          code: 'validation_failed',
          message: 'request: a value is out of range or malformed',
          details: [{ field: 'request', message: 'a value is out of range or malformed' }],
        });
      }
    } finally {
      Logger.overrideLogger(false);
    }
    // One error line each (5xx alerting sees them), none a warning.
    expect(warnings).toEqual([]);
    expect(errors).toHaveLength(4);
    errors.forEach((line, i) => {
      const [context] = JSON.parse(line) as [
        { sqlState: string; route: string; err: { frames: string[] } },
      ];
      expect(context).toMatchObject({ sqlState: states[i], route: '/contacts' });
      // Where it was thrown: this spec's frames.
      expect(context.err.frames[0]).toMatch(/^at .*all-exceptions\.filter\.spec\.ts:\d+:\d+/);
      expect(line).toContain(`GET /contacts: PostgreSQL refused a value (${states[i]})`);
    });
    expect(errors.join('\n')).not.toMatch(/sk_live_X|275760|9999999|invalid input|out of range/);
    // Other database errors stay 500.
    expect(filter(refused('23505', 'duplicate key')).status).toBe(500);
    expect(filter(refused('42P01', 'relation does not exist')).status).toBe(500);
  });
});
