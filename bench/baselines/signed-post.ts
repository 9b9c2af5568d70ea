import { createHmac, createSecretKey } from 'node:crypto';
import { Agent, request } from 'node:http';

/**
 * The bare baselines' one event POST: a Standard Webhooks signature over the
 * body with `secret` (whsec_…), on a keep-alive connection to `url`; resolves
 * once the answer is read.
 */
export function signedPoster(url: string, secret: string) {
  const agent = new Agent({ keepAlive: true });
  const key = createSecretKey(Buffer.from(secret.slice('whsec_'.length), 'base64'));
  const target = new URL(url);
  const post = (id: string, body: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const timestamp = Math.floor(Date.now() / 1000);
      const signature = createHmac('sha256', key)
        .update(`${id}.${timestamp}.${body}`)
        .digest('base64');
      const req = request(
        target,
        {
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'webhook-id': id,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': `v1,${signature}`,
          },
        },
        (res) => {
          res.resume();
          res.on('end', resolve);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  return { post, close: () => agent.destroy() };
}
