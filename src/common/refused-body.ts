import type { IncomingMessage } from 'node:http';

/**
 * How much of a refused upload (a file over its type's limit, a type the
 * platform does not take) is read and thrown away so that its sender, still
 * writing, reads the answer: more than any upload type's limit but a
 * document's, plus the form around it. A longer body is cut off.
 */
export const REFUSED_BODY_DISCARD_BYTES = 20 * 1024 * 1024;

/**
 * How long a refused body is read at most: a sender that drips its bytes is
 * answered and cut off then, so it cannot hold a connection (and this read)
 * for as long as it likes.
 */
export const REFUSED_BODY_DISCARD_MS = 10_000;

/**
 * How many refused bodies are read at once, process-wide; past that a refused
 * request is answered and its connection closed at once, so many senders of
 * large bodies cannot keep the process reading for them.
 */
export const MAX_CONCURRENT_DISCARDS = 32;

let discarding = 0;

/**
 * Reads and discards what is left of a refused request body, up to
 * `maxBytes` and for `deadlineMs` at most, so that its answer reaches a
 * client that is still sending (closing a socket with unread bytes resets it:
 * the client sees EPIPE or ECONNRESET instead of the answer). True once the
 * body has ended; false when it is longer than that, slower than that, too
 * many are being read already, or the connection broke (the caller then
 * answers and closes the connection).
 */
export async function discardRest(
  raw: IncomingMessage,
  maxBytes: number,
  deadlineMs = REFUSED_BODY_DISCARD_MS,
): Promise<boolean> {
  if (raw.complete || raw.readableEnded) return true;
  if (raw.destroyed) return false;
  if (Number(raw.headers['content-length']) > maxBytes) return false;
  if (discarding >= MAX_CONCURRENT_DISCARDS) return false;
  discarding++;
  return new Promise((resolve) => {
    let seen = 0;
    let settled = false;
    const done = (drained: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      raw.off('data', count);
      raw.off('end', ended);
      raw.off('error', failed);
      raw.off('close', closed);
      // Stop reading: the rest is not wanted, and the connection is closed after the answer.
      if (!drained) raw.pause();
      discarding--;
      resolve(drained);
    };
    const deadline = setTimeout(() => done(false), deadlineMs);
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
