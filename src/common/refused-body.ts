import type { IncomingMessage } from 'node:http';

/**
 * How much of a refused request body (over its limit, or refused before it
 * was read) is read and thrown away so that its sender, still writing, reads
 * the answer: four times the webhook's 5 MB, and more than any upload type's
 * limit but a document's, plus the form around it. A longer body is cut off.
 */
export const REFUSED_BODY_DISCARD_BYTES = 20 * 1024 * 1024;

/**
 * Reads and discards what is left of a refused request body, up to
 * `maxBytes`, so that its answer reaches a client that is still sending
 * (closing a socket with unread bytes resets it: the client sees EPIPE or
 * ECONNRESET instead of the answer). True once the body has ended; false
 * when it is longer than that, or the connection broke (the caller answers
 * and closes the connection).
 */
export async function discardRest(raw: IncomingMessage, maxBytes: number): Promise<boolean> {
  if (raw.complete || raw.readableEnded) return true;
  if (raw.destroyed) return false;
  if (Number(raw.headers['content-length']) > maxBytes) return false;
  return new Promise((resolve) => {
    let seen = 0;
    const done = (drained: boolean) => {
      raw.off('data', count);
      raw.off('end', ended);
      raw.off('error', failed);
      raw.off('close', closed);
      resolve(drained);
    };
    const count = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > maxBytes) done(false);
    };
    const ended = () => done(true);
    const failed = () => done(false);
    // A connection that closes without an end (the client gave up) never says 'end'.
    const closed = () => done(raw.complete);
    raw.on('data', count);
    raw.once('end', ended);
    raw.once('error', failed);
    raw.once('close', closed);
    raw.resume();
  });
}
