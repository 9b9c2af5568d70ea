import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Inject, Injectable, Optional } from '@nestjs/common';
import ipaddr from 'ipaddr.js';
import { AppException } from '../common/app.exception.js';
import { AppConfig } from '../config/app-config.js';

/** `dns.lookup` with `all: true`, as the guard calls it (a test passes its own). */
export const TARGET_RESOLVER = Symbol('TARGET_RESOLVER');

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    ),
  );

/** Why a target was refused, for the error message and the delivery record. */
export class TargetRefusedError extends Error {
  readonly code = 'ETARGETREFUSED';
}

/**
 * Keeps event deliveries away from the deployment's own network (SSRF):
 * a target must resolve only to public unicast addresses, unless listed in
 * EVENT_TARGET_ALLOWLIST; loopback is also allowed outside production, for
 * local receivers. Checked when a subscription is saved and again on every
 * connection (the `lookup` below), so a name re-pointed at a private address
 * after the check (DNS rebinding) is refused too.
 */
@Injectable()
export class TargetGuard {
  private readonly allowed: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>;

  constructor(
    private readonly config: AppConfig,
    @Optional() @Inject(TARGET_RESOLVER) private readonly resolve: Resolver = systemResolver,
  ) {
    this.allowed = config.EVENT_TARGET_ALLOWLIST.map((entry) =>
      entry.includes('/')
        ? ipaddr.parseCIDR(entry)
        : ((address) => [address, address.kind() === 'ipv4' ? 32 : 128])(ipaddr.parse(entry)),
    );
  }

  /** Throws 422 event_target_refused unless the URL may receive events. */
  async assertUrl(url: string): Promise<void> {
    const refused = (why: string) =>
      new AppException('event_target_refused', `url is refused: ${why}`);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw refused('it is not a URL');
    }
    if (parsed.username || parsed.password) throw refused('it must not carry credentials');
    const host = hostOf(parsed);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw refused('it must be an https URL');
    }
    let addresses: LookupAddress[];
    try {
      addresses = await this.check(host);
    } catch (error) {
      throw refused(error instanceof Error ? error.message : String(error));
    }
    // Plain http: to localhost outside production; to allow-listed (internal) addresses always.
    if (parsed.protocol === 'http:' && !addresses.every(({ address }) => this.listed(address))) {
      if (this.config.isProduction) {
        throw refused('production takes https (or http to EVENT_TARGET_ALLOWLIST addresses)');
      }
      if (!isLocalName(host)) {
        throw refused(
          'http is allowed for localhost (or EVENT_TARGET_ALLOWLIST addresses) only; use https',
        );
      }
    }
  }

  /** Resolves a host and throws TargetRefusedError when any of its addresses is refused. */
  async check(host: string): Promise<LookupAddress[]> {
    const addresses = isIP(host)
      ? [{ address: host, family: isIP(host) }]
      : await this.resolve(host).catch((error: NodeJS.ErrnoException) => {
          throw new TargetRefusedError(`${host} does not resolve (${error.code ?? 'error'})`);
        });
    for (const { address } of addresses) {
      const why = this.refusal(address);
      if (why) throw new TargetRefusedError(`${host} resolves to ${why} address ${address}`);
    }
    return addresses;
  }

  /** A `lookup` for Node's connection options: only addresses the guard allows are connected to. */
  readonly lookup: LookupFunction = (hostname, options, callback): void => {
    this.check(hostname).then(
      (addresses) =>
        options.all
          ? callback(null, addresses)
          : callback(null, addresses[0].address, addresses[0].family),
      (error: TargetRefusedError) => callback(error, ''),
    );
  };

  /** Whether an address is in EVENT_TARGET_ALLOWLIST. */
  private listed(address: string): boolean {
    let parsed = ipaddr.parse(address);
    if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
      parsed = (parsed as ipaddr.IPv6).toIPv4Address();
    }
    return this.allowed.some((range) => parsed.kind() === range[0].kind() && parsed.match(range));
  }

  /** Why an address is refused (its range), or null when it is allowed. */
  refusal(address: string): string | null {
    let parsed = ipaddr.parse(address);
    if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
      parsed = (parsed as ipaddr.IPv6).toIPv4Address();
    }
    if (this.listed(address)) return null;
    const range = parsed.range();
    if (range === 'unicast') return null;
    if (range === 'loopback' && !this.config.isProduction) return null;
    return `a ${range}`;
  }
}

/** The URL's host without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

function isLocalName(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return isIP(host) !== 0 && ipaddr.parse(host).range() === 'loopback';
}
