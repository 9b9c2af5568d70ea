import type { LookupFunction } from 'node:net';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';

/**
 * How long an idle keep-alive connection is kept. Servers commonly close
 * theirs after 5 s (Node's default); a request sent on a connection the server
 * is closing meets a reset, which for a send is "may have been sent". Closing
 * ours first (Node also honours a shorter `Keep-Alive: timeout` hint) avoids it.
 */
const IDLE_SOCKET_MS = 4000;

/**
 * Keep-alive agents for an outbound client, with a bounded idle time (and,
 * optionally, its own DNS lookup; plain http may have a stricter one).
 */
export function keepAliveAgents(
  maxSockets = Infinity,
  lookup?: LookupFunction,
  plainHttpLookup = lookup,
): { http: HttpAgent; https: HttpsAgent } {
  const options = {
    keepAlive: true,
    // axios sets TCP keep-alive to 60 s on every socket it is handed; the same
    // value here spares a setsockopt on each request and each release.
    keepAliveMsecs: 60_000,
    maxSockets,
    timeout: IDLE_SOCKET_MS,
    lookup,
  };
  return {
    http: new HttpAgent({ ...options, lookup: plainHttpLookup }),
    https: new HttpsAgent(options),
  };
}
