import type { ComponentChildren } from 'preact';

/**
 * The platform's text formatting, as phones show it: *bold*, _italic_,
 * ~strike~, ```monospace``` and `inline code`. Built as elements, never as
 * HTML: a customer's text cannot become markup.
 */
const MARKS: Array<{
  open: string;
  close: string;
  render: (inner: ComponentChildren) => ComponentChildren;
}> = [
  { open: '```', close: '```', render: (inner) => <code class="mono">{inner}</code> },
  { open: '`', close: '`', render: (inner) => <code>{inner}</code> },
  { open: '*', close: '*', render: (inner) => <strong>{inner}</strong> },
  { open: '_', close: '_', render: (inner) => <em>{inner}</em> },
  { open: '~', close: '~', render: (inner) => <s>{inner}</s> },
];

/** A mark opens where it is not inside a word, and its text does not start or end with a space. */
function span(text: string, from: number, mark: (typeof MARKS)[number]): number {
  const before = from === 0 ? ' ' : text[from - 1];
  if (/[\p{L}\p{N}]/u.test(before)) return -1;
  const start = from + mark.open.length;
  if (start >= text.length || /\s/.test(text[start])) return -1;
  const end = text.indexOf(mark.close, start);
  if (end <= start || /\s/.test(text[end - 1])) return -1;
  // Monospace may span lines; the others stay on one.
  if (mark.open !== '```' && text.slice(start, end).includes('\n')) return -1;
  return end;
}

export function formatted(text: string): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  let plain = '';
  let i = 0;
  while (i < text.length) {
    const mark = MARKS.find((m) => text.startsWith(m.open, i));
    const end = mark ? span(text, i, mark) : -1;
    if (mark && end > 0) {
      if (plain) out.push(plain);
      plain = '';
      const inner = text.slice(i + mark.open.length, end);
      // Code shows its text as it is; the other marks may hold marks of their own.
      out.push(mark.render(mark.open.includes('`') ? inner : formatted(inner)));
      i = end + mark.close.length;
    } else {
      plain += text[i];
      i++;
    }
  }
  if (plain) out.push(plain);
  return out;
}
