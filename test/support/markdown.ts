/** Reading the README's sections and tables, for the tests that keep it true. */

/** The text under a heading, up to the next heading of the same or a higher level. */
export function section(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.trim() === heading);
  if (start < 0) throw new Error(`README has no heading "${heading}"`);
  const level = /^#+/.exec(heading)![0].length;
  const end = lines.findIndex(
    (line, index) => index > start && /^#+ /.test(line) && /^#+/.exec(line)![0].length <= level,
  );
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** The rows of the first table in `text`, each a list of cells (header and rule left out). */
export function tableRows(text: string): string[][] {
  const lines = text.split('\n');
  const first = lines.findIndex((line) => line.trimStart().startsWith('|'));
  if (first < 0) throw new Error('no table found');
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.trimStart().startsWith('|')) break;
    rows.push(
      line
        .trim()
        .replace(/^\||\|$/g, '')
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

/** The `code` spans of a cell. */
export const codeSpans = (cell: string): string[] =>
  [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
