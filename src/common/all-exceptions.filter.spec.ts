import type { ArgumentsHost } from '@nestjs/common';
import { BadRequestException, NotFoundException } from '@nestjs/common';
import { AllExceptionsFilter } from './all-exceptions.filter.js';
import { AppException } from './app.exception.js';

interface Sent {
  status?: number;
  headers: Record<string, string>;
  body?: Record<string, unknown>;
}

function hostFor(sent: Sent): ArgumentsHost {
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
  const request = { id: 'req-1', method: 'GET', url: '/x' };
  return {
    switchToHttp: () => ({ getResponse: () => reply, getRequest: () => request }),
  } as unknown as ArgumentsHost;
}

function filter(exception: unknown): Sent {
  const sent: Sent = { headers: {} };
  new AllExceptionsFilter().catch(exception, hostFor(sent));
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
});
