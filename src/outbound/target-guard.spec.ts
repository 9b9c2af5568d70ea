import { createServer } from 'node:http';
import { once } from 'node:events';
import type { LookupAddress } from 'node:dns';
import type { AddressInfo } from 'node:net';
import axios from 'axios';
import { loadConfig } from '../config/load-config.js';
import { keepAliveAgents } from '../common/http-agents.js';
import { TargetGuard } from './target-guard.js';

// Random-looking values: production refuses guessable secrets.
const PRODUCTION = {
  NODE_ENV: 'production',
  PLATFORM_VERIFY_TOKEN: 'verify-token-0123456789',
  PLATFORM_APP_SECRET: 'app-secret-0123456789abcdef',
  ADMIN_PASSWORD: 'Kq7-vT2m-Xw9p-Lr4z',
  JWT_SECRET: 'Qm3vZ8kT1xW7pL4rN9sD2fH6jB5cY0gA',
  ENCRYPTION_KEY: '5f1c9a7e3b8d2064af91c7e5b3d80a6f2e4c7b9d1a3f5e8c0b2d4f6a8c1e3b5d',
  METRICS_TOKEN: 'mT7qZ2xV9kR4wP1s',
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

/** What an admin saving `url` is told: null when it is accepted. */
const refusalOf = (guard: TargetGuard, url: string) => guard.urlRefusal(url);

describe('TargetGuard: where events and instance agents may be sent', () => {
  const zone = new Map<string, string[]>([
    ['hooks.example.com', ['93.184.216.34']],
    ['mixed.example.com', ['93.184.216.34', '10.0.0.5']],
    ['internal.example.com', ['10.20.0.7']],
  ]);

  it('in production takes https to public addresses only', async () => {
    const guard = guardWith(PRODUCTION, zone);
    await expect(refusalOf(guard, 'https://hooks.example.com/x')).resolves.toBeNull();
    const refusals: Array<[string, RegExp]> = [
      ['http://hooks.example.com/x', /production takes https/],
      ['https://localhost/x', /does not resolve|loopback/],
      ['https://127.0.0.1/x', /a loopback address 127\.0\.0\.1/],
      ['https://[::1]/x', /a loopback address ::1/],
      ['https://[::ffff:10.0.0.1]/x', /a private address/],
      ['https://mixed.example.com/x', /a private address 10\.0\.0\.5/],
      ['https://169.254.169.254/latest', /a linkLocal address/],
      ['https://0.0.0.0/x', /an? unspecified address|a unspecified address/],
      ['https://user:s3cr3t@hooks.example.com/x', /credentials/],
      // The addresses of the security review, and IPv4-compatible IPv6.
      ['http://169.254.169.254/latest/meta-data/', /a linkLocal address 169\.254\.169\.254/],
      ['https://[fd00:ec2::254]/', /a uniqueLocal address fd00:ec2::254/],
      ['https://[::127.0.0.1]/', /a loopback address ::7f00:1/],
      ['https://[::a9fe:a9fe]/', /a linkLocal address ::a9fe:a9fe/],
      ['https://nowhere.example.com/x', /does not resolve \(ENOTFOUND\)/],
    ];
    for (const [url, why] of refusals) {
      const refusal = await refusalOf(guard, url);
      expect([url, refusal]).toEqual([url, expect.stringMatching(why)]);
      // The reason never repeats the URL's credentials.
      expect(refusal).not.toContain('s3cr3t');
    }
  });

  it('takes the allow-listed ranges of an internal deployment', async () => {
    const guard = guardWith(
      { ...PRODUCTION, EVENT_TARGET_ALLOWLIST: '10.20.0.0/16,fd00::1' },
      zone,
    );
    await expect(refusalOf(guard, 'https://internal.example.com/x')).resolves.toBeNull();
    // Plain http inside the deployment: to allow-listed addresses only.
    await expect(refusalOf(guard, 'http://internal.example.com/x')).resolves.toBeNull();
    await expect(refusalOf(guard, 'http://hooks.example.com/x')).resolves.toMatch(
      /production takes https/,
    );
    expect(guard.refusal('fd00::1')).toBeNull();
    expect(guard.refusal('10.21.0.1')).toBe('a private');
  });

  it('outside production also takes http to localhost', async () => {
    const guard = guardWith({ NODE_ENV: 'development' }, zone);
    await expect(refusalOf(guard, 'http://127.0.0.1:8080/x')).resolves.toBeNull();
    await expect(refusalOf(guard, 'https://10.1.1.1/x')).resolves.toMatch(/a private address/);
    // Metadata and private IPv6 stay refused outside production too.
    await expect(refusalOf(guard, 'http://169.254.169.254/')).resolves.toMatch(/linkLocal/);
    await expect(refusalOf(guard, 'https://[::a9fe:a9fe]/')).resolves.toMatch(/linkLocal/);
    await expect(refusalOf(guard, 'https://[fd00:ec2::254]/')).resolves.toMatch(/uniqueLocal/);
  });

  it('refuses on connection a name re-pointed at a private address after the check (DNS rebinding)', async () => {
    const server = createServer((_req, res) => res.end('ok'));
    server.listen(0, '127.0.0.2');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    try {
      const rebinding = new Map(zone).set('rebind.example.com', ['93.184.216.34']);
      const guard = guardWith({ ...PRODUCTION, EVENT_TARGET_ALLOWLIST: '127.0.0.2' }, rebinding);
      await expect(refusalOf(guard, 'https://rebind.example.com/x')).resolves.toBeNull();
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

describe('TargetGuard: IPv6 addresses that carry an IPv4 address', () => {
  const production = guardWith(PRODUCTION, new Map());
  const development = guardWith({ NODE_ENV: 'development' }, new Map());

  // [address, why it is refused in production (null: allowed)]
  const cases: Array<[string, string | null]> = [
    // IPv4-mapped ::ffff:a.b.c.d
    ['::ffff:127.0.0.1', 'a loopback'],
    ['::ffff:169.254.169.254', 'a linkLocal'],
    ['::ffff:10.0.0.1', 'a private'],
    ['::ffff:93.184.216.34', null],
    // IPv4-compatible ::a.b.c.d (as the URL parser writes it: ::7f00:1)
    ['::7f00:1', 'a loopback'],
    ['::a9fe:a9fe', 'a linkLocal'],
    ['::a00:1', 'a private'],
    ['::5db8:d822', null],
    // IPv4-translated ::ffff:0:a.b.c.d
    ['::ffff:0:a9fe:a9fe', 'a linkLocal'],
    ['::ffff:0:5db8:d822', null],
    // NAT64 64:ff9b::/96 (what DNS64 answers for an IPv4-only name)
    ['64:ff9b::a9fe:a9fe', 'a linkLocal'],
    ['64:ff9b::7f00:1', 'a loopback'],
    ['64:ff9b::c0a8:101', 'a private'],
    ['64:ff9b::5db8:d822', null],
    // NAT64 local-use 64:ff9b:1::/48: the IPv4 address sits where the operator chose
    ['64:ff9b:1::5db8:d822', 'a NAT64 local-use'],
    // 6to4 2002:AABB:CCDD::/48
    ['2002:a9fe:a9fe::1', 'a linkLocal'],
    ['2002:c0a8:101::1', 'a private'],
    ['2002:5db8:d822::1', null],
    // Teredo 2001::/32: server 93.184.216.34, client XOR 0xffffffff
    ['2001:0:5db8:d822::f5ff:fffe', 'a private'], // client 10.0.0.1
    ['2001:0:5db8:d822::a247:27dd', null], // client 93.184.216.34
    ['2001:0:a00:1::a247:27dd', 'a private'], // server 10.0.0.1
    // Plain IPv6
    ['2606:4700::1111', null],
    ['::1', 'a loopback'],
    ['::', 'a unspecified'],
    ['fd00:ec2::254', 'a uniqueLocal'],
    ['fe80::1', 'a linkLocal'],
  ];

  it.each(cases)('%s in production: %s', (address, why) => {
    expect(production.refusal(address)).toBe(why);
  });

  it('refuses them at save and on every connection, whatever the name answers', async () => {
    const zone = new Map([['aaaa.example.com', ['::a9fe:a9fe']]]);
    const guard = guardWith(PRODUCTION, zone);
    await expect(guard.urlRefusal('https://aaaa.example.com/')).resolves.toBe(
      'aaaa.example.com resolves to a linkLocal address ::a9fe:a9fe',
    );
    await expect(guard.check('aaaa.example.com')).rejects.toMatchObject({
      code: 'ETARGETREFUSED',
      message: 'aaaa.example.com resolves to a linkLocal address ::a9fe:a9fe',
    });
  });

  it('outside production allows the loopback ones only, as plain loopback', () => {
    expect(development.refusal('::ffff:127.0.0.1')).toBeNull();
    expect(development.refusal('::7f00:1')).toBeNull();
    expect(development.refusal('::a9fe:a9fe')).toBe('a linkLocal');
    expect(development.refusal('64:ff9b::a00:1')).toBe('a private');
  });

  it('allow-lists by the IPv4 address carried', () => {
    const guard = guardWith({ ...PRODUCTION, EVENT_TARGET_ALLOWLIST: '10.20.0.0/16' }, new Map());
    expect(guard.refusal('::ffff:10.20.0.7')).toBeNull();
    expect(guard.refusal('64:ff9b::a14:7')).toBeNull();
    expect(guard.refusal('64:ff9b::a15:7')).toBe('a private');
  });
});

describe('TargetGuard: before each request to a saved URL', () => {
  const guard = guardWith({ ...PRODUCTION, EVENT_TARGET_ALLOWLIST: '127.0.0.2' }, new Map());

  it('refuses credentials, other schemes and refused IP literals without resolving anything', () => {
    const cases: Array<[string, string | null]> = [
      ['https://hooks.example.com/x', null], // a name: checked by the lookup on connection
      ['http://127.0.0.2:8080/agent', null], // allow-listed, plain http too
      ['https://93.184.216.34/x', null],
      ['https://user:secret@hooks.example.com/x', 'it must not carry credentials (user:password@)'],
      ['ftp://hooks.example.com/x', 'it must be an https URL'],
      ['http://127.0.0.1:6379/', '127.0.0.1 is a loopback address'],
      ['https://[::127.0.0.1]/', '::7f00:1 is a loopback address'],
      ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a linkLocal address'],
      [
        'http://93.184.216.34/x',
        'production takes https (or http to EVENT_TARGET_ALLOWLIST addresses)',
      ],
      ['not a url', 'it is not a URL'],
    ];
    for (const [url, why] of cases) expect([url, guard.requestRefusal(url)]).toEqual([url, why]);
  });

  it('connects plain http in production only to allow-listed addresses', async () => {
    const zone = new Map([
      ['public.example.com', ['93.184.216.34']],
      ['internal.example.com', ['127.0.0.2']],
    ]);
    const strict = guardWith({ ...PRODUCTION, EVENT_TARGET_ALLOWLIST: '127.0.0.2' }, zone);
    const lookUp = (lookup: TargetGuard['lookup'], host: string) =>
      new Promise<string>((resolve, reject) =>
        lookup(host, { all: true }, (error, addresses) =>
          error
            ? reject(error)
            : resolve((addresses as LookupAddress[]).map(({ address }) => address).join()),
        ),
      );
    await expect(lookUp(strict.plainHttpLookup, 'internal.example.com')).resolves.toBe('127.0.0.2');
    await expect(lookUp(strict.lookup, 'public.example.com')).resolves.toBe('93.184.216.34');
    await expect(lookUp(strict.plainHttpLookup, 'public.example.com')).rejects.toMatchObject({
      code: 'ETARGETREFUSED',
      message: expect.stringMatching(/production takes https/),
    });
  });
});
