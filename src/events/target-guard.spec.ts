import { createServer } from 'node:http';
import { once } from 'node:events';
import type { LookupAddress } from 'node:dns';
import type { AddressInfo } from 'node:net';
import axios from 'axios';
import { loadConfig } from '../config/load-config.js';
import { keepAliveAgents } from '../common/http-agents.js';
import { TargetGuard } from './target-guard.js';

const PRODUCTION = {
  NODE_ENV: 'production',
  PLATFORM_VERIFY_TOKEN: 'verify-token-0123456789',
  PLATFORM_APP_SECRET: 'app-secret-0123456789abcdef',
  ADMIN_PASSWORD: 'a-strong-admin-password-0123',
  JWT_SECRET: 'jwt-secret-0123456789abcdef0123456789abcdef',
  ENCRYPTION_KEY: 'a'.repeat(64),
  METRICS_TOKEN: 'metrics-token-0123456789',
};

/** A guard whose DNS answers from `zone` (names re-pointed between calls as a test wants). */
function guardWith(env: Record<string, string>, zone: Map<string, string[]>): TargetGuard {
  const { config } = loadConfig(env);
  return new TargetGuard(config, (host) => {
    const addresses = zone.get(host);
    if (!addresses)
      return Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
    return Promise.resolve(
      addresses.map((address): LookupAddress => ({
        address,
        family: address.includes(':') ? 6 : 4,
      })),
    );
  });
}

describe('TargetGuard: where events may be sent', () => {
  const zone = new Map<string, string[]>([
    ['hooks.example.com', ['93.184.216.34']],
    ['mixed.example.com', ['93.184.216.34', '10.0.0.5']],
    ['internal.example.com', ['10.20.0.7']],
  ]);

  it('in production takes https to public addresses only', async () => {
    const guard = guardWith(PRODUCTION, zone);
    await expect(guard.assertUrl('https://hooks.example.com/x')).resolves.toBeUndefined();
    const refusals: Array<[string, RegExp]> = [
      ['http://hooks.example.com/x', /production takes https/],
      ['https://localhost/x', /does not resolve|loopback/],
      ['https://127.0.0.1/x', /a loopback address 127\.0\.0\.1/],
      ['https://[::1]/x', /a loopback address ::1/],
      ['https://[::ffff:10.0.0.1]/x', /a private address/],
      ['https://mixed.example.com/x', /a private address 10\.0\.0\.5/],
      ['https://169.254.169.254/latest', /a linkLocal address/],
      ['https://0.0.0.0/x', /an? unspecified address|a unspecified address/],
      ['https://user:pass@hooks.example.com/x', /credentials/],
      ['https://nowhere.example.com/x', /does not resolve \(ENOTFOUND\)/],
    ];
    for (const [url, why] of refusals) {
      await expect(guard.assertUrl(url)).rejects.toMatchObject({
        code: 'event_target_refused',
        message: expect.stringMatching(why),
      });
    }
  });

  it('takes the allow-listed ranges of an internal deployment', async () => {
    const guard = guardWith(
      { ...PRODUCTION, EVENT_TARGET_ALLOWLIST: '10.20.0.0/16,fd00::1' },
      zone,
    );
    await expect(guard.assertUrl('https://internal.example.com/x')).resolves.toBeUndefined();
    // Plain http inside the deployment: to allow-listed addresses only.
    await expect(guard.assertUrl('http://internal.example.com/x')).resolves.toBeUndefined();
    await expect(guard.assertUrl('http://hooks.example.com/x')).rejects.toMatchObject({
      code: 'event_target_refused',
    });
    expect(guard.refusal('fd00::1')).toBeNull();
    expect(guard.refusal('10.21.0.1')).toBe('a private');
  });

  it('outside production also takes http to localhost', async () => {
    const guard = guardWith({ NODE_ENV: 'development' }, zone);
    await expect(guard.assertUrl('http://127.0.0.1:8080/x')).resolves.toBeUndefined();
    await expect(guard.assertUrl('https://10.1.1.1/x')).rejects.toMatchObject({
      code: 'event_target_refused',
    });
  });

  it('refuses on connection a name re-pointed at a private address after the check (DNS rebinding)', async () => {
    const server = createServer((_req, res) => res.end('ok'));
    server.listen(0, '127.0.0.2');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    try {
      const rebinding = new Map(zone).set('rebind.example.com', ['93.184.216.34']);
      const guard = guardWith({ ...PRODUCTION, EVENT_TARGET_ALLOWLIST: '127.0.0.2' }, rebinding);
      await expect(guard.assertUrl('https://rebind.example.com/x')).resolves.toBeUndefined();
      // Now the name answers a loopback address: the connection is refused before it is made.
      rebinding.set('rebind.example.com', ['127.0.0.1']);
      const agents = keepAliveAgents(Infinity, guard.lookup);
      const refused = await axios
        .get(`http://rebind.example.com:${port}/`, { httpAgent: agents.http, proxy: false })
        .then(
          () => null,
          (error: { code?: string; message: string }) => error,
        );
      expect(refused?.code).toBe('ETARGETREFUSED');
      expect(refused?.message).toMatch(/a loopback address 127\.0\.0\.1/);
      // An allow-listed address is connected to through the same lookup.
      rebinding.set('rebind.example.com', ['127.0.0.2']);
      const allowed = await axios.get<string>(`http://rebind.example.com:${port}/`, {
        httpAgent: agents.http,
        proxy: false,
      });
      expect(allowed.data).toBe('ok');
      agents.http.destroy();
    } finally {
      server.close();
    }
  });
});
