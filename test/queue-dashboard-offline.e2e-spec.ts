import { Queue } from 'bullmq';
import { OUTBOUND_RECORD_JOB, OUTBOUND_RECORD_QUEUE, WEBHOOK_STREAM } from '../src/queue/queues.js';
import { ADMIN_PASSWORD, http, useTestService } from './support/test-app.js';

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** A URL a page would load from another host: http(s) or protocol-relative, in href, src, url() or @import. */
const EXTERNAL_LOAD =
  /(?:\b(?:href|src)\s*=\s*["']?|url\(\s*["']?|@import\s+["']?)(?:https?:)?\/\/[^"'\s)>]+/gi;

describe('queue dashboard (/admin/queues): request ids and no outside hosts', () => {
  const context = useTestService();
  const admin = { authorization: basic('admin', ADMIN_PASSWORD) };

  it('names the request in x-request-id on a refusal, as every answer does', async () => {
    const refused = await http(context.service.url, 'GET', '/admin/queues', {
      headers: { 'x-request-id': 'dashboard-test-0001' },
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('x-request-id')).toBe('dashboard-test-0001');

    const made = await http(context.service.url, 'GET', '/admin/queues/api/queues', {
      headers: { authorization: basic('admin', 'wrong-password') },
    });
    expect(made.status).toBe(401);
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);

    const crossSite = await http(context.service.url, 'PUT', '/admin/queues/api/queues/resume', {
      headers: { ...admin, origin: 'https://evil.example', 'x-request-id': 'dashboard-test-0002' },
    });
    expect(crossSite.status).toBe(403);
    expect(crossSite.headers.get('x-request-id')).toBe('dashboard-test-0002');

    const page = await http(context.service.url, 'GET', '/admin/queues', { headers: admin });
    expect(page.status).toBe(200);
    expect(page.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('loads nothing from another host: no fonts from Google, everything from the service', async () => {
    const page = await http(context.service.url, 'GET', '/admin/queues', { headers: admin });
    expect(page.status).toBe(200);
    expect(page.text).toContain('<div id="root">');
    expect(page.text.match(EXTERNAL_LOAD) ?? []).toEqual([]);
    expect(page.text).not.toMatch(/fonts\.(googleapis|gstatic)\.com/);

    // What the page loads (its stylesheets and scripts) comes from the service, and loads nothing further.
    const base = new URL(/<base href="([^"]+)"/.exec(page.text)![1], context.service.url);
    const assets = [...page.text.matchAll(/<(?:link|script)\b[^>]*\b(?:href|src)="([^"]+)"/g)].map(
      ([, path]) => new URL(path, base),
    );
    const stylesheets = assets.filter((url) => url.pathname.endsWith('.css'));
    expect(stylesheets.length).toBeGreaterThan(0);
    expect(assets.some((url) => url.pathname.endsWith('.js'))).toBe(true);
    for (const url of assets) {
      expect(url.origin).toBe(new URL(context.service.url).origin);
      const asset = await http(context.service.url, 'GET', url.pathname, { headers: admin });
      expect({ url: url.pathname, status: asset.status }).toEqual({
        url: url.pathname,
        status: 200,
      });
      if (url.pathname.endsWith('.css')) {
        expect({ url: url.pathname, loads: asset.text.match(EXTERNAL_LOAD) ?? [] }).toEqual({
          url: url.pathname,
          loads: [],
        });
      }
    }
  });

  it('shows job data as JSON: a parked send record keeps its message body an object', async () => {
    // Webhook deliveries are a Redis stream (no queue, not on the dashboard); the
    // queues hold objects. A delayed job stays put while the test reads it.
    const queue = new Queue(OUTBOUND_RECORD_QUEUE, {
      connection: { url: context.service.config.REDIS_URL },
      prefix: context.service.config.REDIS_PREFIX,
    });
    try {
      const body = { type: 'text', text: { body: 'Hello "Ana"' } };
      await queue.add(
        OUTBOUND_RECORD_JOB,
        { instanceId: 'i', recipient: { to: '5511999990000' }, type: 'text', body, wamid: 'w' },
        { delay: 3_600_000 },
      );
      const shown = await http<{
        queues: Array<{ name: string; jobs: Array<{ data: Record<string, unknown> }> }>;
      }>(
        context.service.url,
        'GET',
        `/admin/queues/api/queues?activeQueue=${OUTBOUND_RECORD_QUEUE}&status=delayed&page=1`,
        { headers: admin },
      );
      expect(shown.status).toBe(200);
      expect(shown.body.queues.map((one) => one.name)).not.toContain(WEBHOOK_STREAM);
      const records = shown.body.queues.find((one) => one.name === OUTBOUND_RECORD_QUEUE)!;
      expect(records.jobs).toHaveLength(1);
      expect(records.jobs[0].data.body).toEqual(body);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });
});
