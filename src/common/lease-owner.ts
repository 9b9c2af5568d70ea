import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * A lease owner name: which process, and which run in it (two runs never
 * share one). Turns are leased by one; the webhook stream's readers are
 * consumers named by one.
 */
export function newLeaseOwner(): string {
  return `${hostname().slice(0, 48)}/${process.pid}/${randomBytes(6).toString('hex')}`;
}
