import { isIP } from 'node:net';

const IPV4_MAPPED = 0xffff_0000_0000n;
const ALL_IPV6 = (1n << 128n) - 1n;

/** An address as a 128-bit number; IPv4 as its IPv4-mapped IPv6 form (::ffff:a.b.c.d). */
function addressValue(address: string): bigint {
  if (isIP(address) === 4) {
    return (
      IPV4_MAPPED +
      BigInt(address.split('.').reduce((value, part) => value * 256 + Number(part), 0))
    );
  }
  // The URL parser writes any IPv6 form (embedded IPv4 included) as hex groups around one `::`.
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const [head, tail] = canonical.split('::');
  const groups = (part: string | undefined): string[] => (part ? part.split(':') : []);
  const missing = 8 - groups(head).length - groups(tail).length;
  const all = [
    ...groups(head),
    ...Array<string>(tail === undefined ? 0 : missing).fill('0'),
    ...groups(tail),
  ];
  return all.reduce((value, group) => (value << 16n) + BigInt(parseInt(group, 16)), 0n);
}

/**
 * The first and last address of `address/bits` in the 128-bit space; null
 * for what is not an address or a range (the configuration's validation
 * refuses those).
 */
function range(entry: string): [bigint, bigint] | null {
  const [address, bits, ...rest] = entry.split('/');
  const width = isIP(address) === 4 ? 32 : 128;
  if (isIP(address) === 0 || rest.length > 0) return null;
  if (bits !== undefined && !/^\d{1,3}$/.test(bits)) return null;
  const prefix = bits === undefined ? width : Number(bits);
  if (prefix > width) return null;
  let value: bigint;
  try {
    value = addressValue(address);
  } catch {
    return null;
  }
  const size = 1n << BigInt(width - prefix);
  const start = value & ~(size - 1n);
  return [start, start + size - 1n];
}

function covers(ranges: Array<[bigint, bigint]>, first: bigint, last: bigint): boolean {
  let next = first;
  for (const [start, end] of [...ranges].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    if (start > next) break;
    if (end >= next) next = end + 1n;
    if (next > last) return true;
  }
  return false;
}

/**
 * Whether trusted proxies (valid addresses and CIDR ranges) take in every
 * client: all of IPv4 (`0.0.0.0/0`, `0.0.0.0/1,128.0.0.0/1`, `::ffff:0:0/96`,
 * which trusts every IPv4 client as its mapped form) or all of IPv6 (`::/0`).
 * Any client could then claim any address in X-Forwarded-For.
 */
export function trustsEveryAddress(entries: unknown): boolean {
  if (!Array.isArray(entries)) return false;
  const ranges = entries
    .map((entry) => range(String(entry)))
    .filter((found): found is [bigint, bigint] => found !== null);
  return covers(ranges, IPV4_MAPPED, IPV4_MAPPED + 0xffff_ffffn) || covers(ranges, 0n, ALL_IPV6);
}
