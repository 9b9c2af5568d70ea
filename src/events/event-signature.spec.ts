import { Webhook } from 'standardwebhooks';
import { newSigningSecret, signatureHeader, signingKey } from './event-signature.js';

describe('event signatures (Standard Webhooks)', () => {
  const body = JSON.stringify({ id: 'evt-1', type: 'ping', data: { message: 'test event' } });

  it('are verified by the reference implementation, and refused when anything changes', () => {
    const secret = newSigningSecret();
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': 'evt-1',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader([signingKey(secret)], 'evt-1', timestamp, body),
    };
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'evt-2' })).toThrow();
    expect(() => new Webhook(newSigningSecret()).verify(body, headers)).toThrow();
  });

  it('carry one signature per secret during a rotation, each verifiable', () => {
    const [current, previous] = [newSigningSecret(), newSigningSecret()];
    const timestamp = Math.floor(Date.now() / 1000);
    const header = signatureHeader([current, previous].map(signingKey), 'evt-1', timestamp, body);
    expect(header.split(' ')).toHaveLength(2);
    for (const secret of [current, previous]) {
      expect(
        new Webhook(secret).verify(body, {
          'webhook-id': 'evt-1',
          'webhook-timestamp': String(timestamp),
          'webhook-signature': header,
        }),
      ).toEqual(JSON.parse(body));
    }
  });
});
