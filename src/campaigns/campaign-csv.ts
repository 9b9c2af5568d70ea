import { CsvError, parse } from 'csv-parse';
import { Readable } from 'node:stream';
import { AppException } from '../common/app.exception.js';
import type { CsvColumnsDto } from './dto/campaign.dto.js';

/** One data row of a campaign's CSV: its line in the file and its cells by column. */
export interface CsvRow {
  line: number;
  cells: Record<string, string>;
}

/** Delimiters a list may use: spreadsheets in Brazil write `;`, elsewhere `,`; tabs from pastes. */
const DELIMITERS = [',', ';', '\t'] as const;

/** The delimiter the header line uses most (a header rarely quotes a delimiter). */
export function sniffDelimiter(header: string): string {
  let best: string = DELIMITERS[0];
  let count = 0;
  for (const delimiter of DELIMITERS) {
    const seen = header.split(delimiter).length - 1;
    if (seen > count) [best, count] = [delimiter, seen];
  }
  return best;
}

/** The first line of a stream (its header), and the stream with that line put back. */
async function peekHeader(
  source: AsyncIterable<Buffer>,
): Promise<{ header: string; body: AsyncIterable<Buffer> }> {
  const iterator = source[Symbol.asyncIterator]();
  const seen: Buffer[] = [];
  let size = 0;
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    seen.push(next.value);
    size += next.value.length;
    if (next.value.includes(10) || size > 64 * 1024) break;
  }
  const head = Buffer.concat(seen);
  const end = head.indexOf(10);
  async function* body(): AsyncGenerator<Buffer> {
    yield head;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
  return { header: head.subarray(0, end < 0 ? head.length : end).toString('utf8'), body: body() };
}

/**
 * Reads a CSV (a header row, then one recipient a row) as it arrives, in
 * rows named by their header. The columns the mapping names must exist.
 */
export async function* csvRows(
  source: AsyncIterable<Buffer>,
  columns: CsvColumnsDto,
  maxRows: number,
): AsyncGenerator<CsvRow> {
  const { header, body } = await peekHeader(source);
  const parser = Readable.from(body).pipe(
    parse({
      bom: true,
      delimiter: sniffDelimiter(header),
      columns: (names: string[]) => {
        checkColumns(
          names.map((name) => name.trim()),
          columns,
        );
        return names.map((name) => name.trim());
      },
      skip_empty_lines: true,
      relax_column_count: true,
      trim: true,
      info: true,
    }),
  );
  let rows = 0;
  try {
    for await (const record of parser as AsyncIterable<{
      record: Record<string, string | undefined>;
      info: { lines: number };
    }>) {
      if (++rows > maxRows) {
        throw new AppException(
          'payload_too_large',
          `A CSV lists at most ${maxRows.toLocaleString('en')} recipients`,
        );
      }
      const cells: Record<string, string> = {};
      for (const [name, value] of Object.entries(record.record)) cells[name] = value ?? '';
      yield { line: record.info.lines, cells };
    }
  } catch (error) {
    // The parser's own errors (an unclosed quote…) name the line they met it on.
    if (error instanceof CsvError) {
      const line = (error as CsvError & { lines?: number }).lines;
      throw AppException.validation([
        { field: 'file', message: `${line ? `line ${line}: ` : ''}${error.message}` },
      ]);
    }
    throw error;
  }
}

/** 400 naming each mapped column the header lacks. */
function checkColumns(names: string[], columns: CsvColumnsDto): void {
  const have = new Set(names);
  const wanted: Array<[string, string]> = [
    ...(columns.to !== undefined ? [['campaign.columns.to', columns.to] as [string, string]] : []),
    ...(columns.recipient !== undefined
      ? [['campaign.columns.recipient', columns.recipient] as [string, string]]
      : []),
    ...Object.entries(columns.parameters ?? {}).map(
      ([parameter, column]) =>
        [`campaign.columns.parameters.${parameter}`, column] as [string, string],
    ),
  ];
  const missing = wanted.filter(([, column]) => !have.has(column));
  if (missing.length > 0) {
    const list = names.slice(0, 20).join(', ');
    throw AppException.validation(
      missing.map(([field, column]) => ({
        field,
        message: `names ${column}, which is not a column of the file (its header: ${list})`,
      })),
    );
  }
}
