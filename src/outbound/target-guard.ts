import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Inject, Injectable, Optional } from '@nestjs/common';
import ipaddr from 'ipaddr.js';
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

  /** `unresolved`: the name did not resolve (DNS may answer later), rather than to a refused address. */
  constructor(
    message: string,
    readonly unresolved = false,
  ) {
    super(message);
  }
}

/**
 * Keeps every outbound target an admin configures (event subscriptions, an
 * instance's own agent) away from the deployment's own network (SSRF): a
 * target must resolve only to public unicast addresses, unless listed in
 * EVENT_TARGET_ALLOWLIST (the one allow-list of outbound targets); loopback
 * is also allowed outside production, for local receivers. Checked when a URL
 * is saved and again on every connection (the lookups below), so a name
 * re-pointed at a private address after the check (DNS rebinding) is refused
 * too. The global AGENT_MODULE_URL comes from the environment and is trusted.
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

  /**
   * Why a URL may not be a target (when an admin saves one), or null. The
   * reason names the host and the address, never the URL (it may carry secrets).
   */
  async urlRefusal(url: string): Promise<string | null> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return 'it is not a URL';
    }
    const early = this.syntaxRefusal(parsed);
    if (early) return early;
    const host = hostOf(parsed);
    let addresses: LookupAddress[];
    try {
      addresses = await this.check(host);
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
    // Plain http: to localhost outside production; to allow-listed (internal) addresses always.
    if (parsed.protocol === 'http:' && !addresses.every(({ address }) => this.listed(address))) {
      if (this.config.isProduction) {
        return 'production takes https (or http to EVENT_TARGET_ALLOWLIST addresses)';
      }
      if (!isLocalName(host)) {
        return 'http is allowed for localhost (or EVENT_TARGET_ALLOWLIST addresses) only; use https';
      }
    }
    return null;
  }

  /**
   * Before each request to a saved URL: what needs no DNS (credentials, the
   * scheme, an IP literal's address and the http rule for it). A name is
   * checked by the lookups on connection, which Node skips for IP literals.
   */
  requestRefusal(target: string): string | null {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return 'it is not a URL';
    }
    const early = this.syntaxRefusal(url);
    if (early) return early;
    const host = hostOf(url);
    if (!isIP(host)) return null;
    const why = this.refusal(host);
    if (why) return `${host} is ${why} address`;
    if (url.protocol === 'http:' && !this.listed(host)) {
      if (this.config.isProduction)
        return 'production takes https (or http to EVENT_TARGET_ALLOWLIST addresses)';
      if (!isLocalName(host)) return 'http is allowed for localhost only; use https';
    }
    return null;
  }

  private syntaxRefusal(url: URL): string | null {
    if (url.username || url.password) return 'it must not carry credentials (user:password@)';
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'it must be an https URL';
    return null;
  }

  /** Resolves a host and throws TargetRefusedError when any of its addresses is refused. */
  async check(host: string, plainHttp = false): Promise<LookupAddress[]> {
    const addresses = isIP(host)
      ? [{ address: host, family: isIP(host) }]
      : await this.resolve(host).catch((error: NodeJS.ErrnoException) => {
          throw new TargetRefusedError(`${host} does not resolve (${error.code ?? 'error'})`, true);
        });
    for (const { address } of addresses) {
      const why = this.refusal(address);
      if (why) throw new TargetRefusedError(`${host} resolves to ${why} address ${address}`);
      if (plainHttp && !this.listed(address) && this.config.isProduction) {
        throw new TargetRefusedError(
          `${host} resolves to ${address}, not an EVENT_TARGET_ALLOWLIST address: production takes https`,
        );
      }
    }
    return addresses;
  }

  /** A `lookup` for Node's connection options: only addresses the guard allows are connected to. */
  readonly lookup: LookupFunction = (hostname, options, callback): void => {
    this.answer(this.check(hostname), options.all === true, callback);
  };

  /**
   * The same for plain-http connections: in production also only to
   * EVENT_TARGET_ALLOWLIST addresses, as when the URL was saved.
   */
  readonly plainHttpLookup: LookupFunction = (hostname, options, callback): void => {
    this.answer(this.check(hostname, true), options.all === true, callback);
  };

  private answer(
    checked: Promise<LookupAddress[]>,
    all: boolean,
    callback: Parameters<LookupFunction>[2],
  ): void {
    checked.then(
      (addresses) =>
        all ? callback(null, addresses) : callback(null, addresses[0].address, addresses[0].family),
      (error: TargetRefusedError) => callback(error, ''),
    );
  }

  /** Whether an address (or, for IPv6, every IPv4 address it carries) is in EVENT_TARGET_ALLOWLIST. */
  private listed(address: string): boolean {
    const parsed = ipaddr.parse(address);
    if (this.inAllowList(parsed)) return true;
    const embedded = parsed.kind() === 'ipv6' ? embeddedIPv4(parsed as ipaddr.IPv6) : null;
    return embedded !== null && embedded.every((ipv4) => this.inAllowList(ipv4));
  }

  private inAllowList(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
    return this.allowed.some((range) => address.kind() === range[0].kind() && address.match(range));
  }

  /** Why an address is refused (its range), or null when it is allowed. */
  refusal(address: string): string | null {
    if (this.listed(address)) return null;
    const parsed = ipaddr.parse(address);
    if (parsed.kind() === 'ipv6') {
      const ipv6 = parsed as ipaddr.IPv6;
      if (ipv6.match(NAT64_LOCAL_USE)) return 'a NAT64 local-use';
      // Judged by the IPv4 address it stands for (::ffff:10.0.0.1 is 10.0.0.1).
      const embedded = embeddedIPv4(ipv6);
      if (embedded) {
        for (const ipv4 of embedded) {
          const why = this.inAllowList(ipv4) ? null : this.rangeRefusal(ipv4);
          if (why) return why;
        }
        return null;
      }
    }
    return this.rangeRefusal(parsed);
  }

  private rangeRefusal(address: ipaddr.IPv4 | ipaddr.IPv6): string | null {
    const range = address.range();
    if (range === 'unicast') return null;
    if (range === 'loopback' && !this.config.isProduction) return null;
    return `a ${range}`;
  }
}

/** RFC 8215's local-use NAT64 prefix: where the IPv4 address sits depends on the operator's choice. */
const NAT64_LOCAL_USE = ipaddr.parseCIDR('64:ff9b:1::/48');
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

/**
 * The IPv4 addresses an IPv6 address carries, which decide where it leads:
 * IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d` (deprecated, but
 * some stacks still route it to IPv4), IPv4-translated `::ffff:0:a.b.c.d`,
 * NAT64 `64:ff9b::a.b.c.d`, 6to4 `2002:AABB:CCDD::/48` and Teredo (its
 * server, and its client XOR 0xffffffff). Null for any other address.
 */
export function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] | null {
  const p = address.parts;
  const ipv4 = (high: number, low: number) =>
    new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  switch (address.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return [ipv4(p[6], p[7])];
    case 'rfc6052':
      return address.match(NAT64_WELL_KNOWN) ? [ipv4(p[6], p[7])] : null;
    case '6to4':
      return [ipv4(p[1], p[2])];
    case 'teredo':
      return [ipv4(p[2], p[3]), ipv4(p[6] ^ 0xffff, p[7] ^ 0xffff)];
    default:
      break;
  }
  // ::a.b.c.d: the first 96 bits zero (:: and ::1 have ranges of their own).
  if (p.slice(0, 6).every((part) => part === 0) && (p[6] !== 0 || p[7] > 1)) {
    return [ipv4(p[6], p[7])];
  }
  return null;
}

/** The URL's host without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

function isLocalName(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return isIP(host) !== 0 && ipaddr.parse(host).range() === 'loopback';
}
