/** The platform's longest text message. */
export const MAX_TEXT_LENGTH = 4096;

/**
 * Splits a long reply into messages of at most `max` characters, cutting at
 * a paragraph break, else a sentence end, else a space, else anywhere.
 */
export function splitReply(text: string, max = MAX_TEXT_LENGTH): string[] {
  const parts: string[] = [];
  let rest = text.trim();
  while (rest.length > max) {
    const window = rest.slice(0, max + 1);
    const cut =
      lastBoundary(window, /\n\s*\n/g) ??
      lastBoundary(window, /[.!?…](?=\s)/g, 1) ??
      lastBoundary(window, /\s/g) ??
      max;
    parts.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest.length > 0) parts.push(rest);
  return parts;
}

/** Where the last match in the window ends (+ offset), if past its first half. */
function lastBoundary(window: string, pattern: RegExp, offset = 0): number | undefined {
  let last: number | undefined;
  for (const match of window.matchAll(pattern)) {
    const at = match.index + (offset || match[0].length);
    if (at <= window.length - 1 && at > window.length / 2) last = at;
  }
  return last;
}
