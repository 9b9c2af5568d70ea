import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline as pipelineCallback, Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CsvError, parse } from 'csv-parse';
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

/** The longest row a list may have: an unclosed quote is refused there, not at the file's end. */
const MAX_RECORD_BYTES = 64 * 1024;

/**
 * Reads a CSV (a header row, then one recipient a row) in rows named by
 * their header. The columns the mapping names must exist.
 */
export async function* csvRows(
  source: AsyncIterable<Buffer>,
  columns: CsvColumnsDto,
  maxRows: number,
): AsyncGenerator<CsvRow> {
  const { header, body } = await peekHeader(source);
  const parser = parse({
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
    max_record_size: MAX_RECORD_BYTES,
  });
  // pipeline, not pipe: an error of the source reaches the parser (and this loop).
  pipelineCallback(Readable.from(body), parser, () => undefined);
  let rows = 0;
  let lastLine = 1;
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
      lastLine = record.info.lines;
      yield { line: lastLine, cells };
    }
  } catch (error) {
    // The parser meets an unclosed quote where it gives up, not where it opened:
    // the last row read whole says where to look.
    if (error instanceof CsvError) {
      throw AppException.validation([
        { field: 'file', message: `after line ${lastLine}: ${error.message}` },
      ]);
    }
    throw error;
  } finally {
    parser.destroy();
  }
}

/**
 * Writes an uploaded list to a temporary file as it arrives (the import then
 * reads it at disk speed, whatever the client's), refusing it past
 * `maxBytes` (413) or when it is not UTF-8 (400: a spreadsheet's other
 * encodings would reach customers as garbled text). The file's path; the
 * caller removes it.
 */
export async function spoolCsv(file: Readable, maxBytes: number): Promise<string> {
  const path = join(tmpdir(), `mc-campaign-${randomUUID()}.csv`);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const notUtf8 = () =>
    AppException.validation([
      { field: 'file', message: 'is not UTF-8 text (save it as "CSV UTF-8")' },
    ]);
  let total = 0;
  const check = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      total += chunk.length;
      if (total > maxBytes) {
        done(
          new AppException(
            'payload_too_large',
            `A campaign's CSV is limited to ${maxBytes / 1024 / 1024} MB`,
          ),
        );
        return;
      }
      try {
        decoder.decode(chunk, { stream: true });
      } catch {
        done(notUtf8());
        return;
      }
      done(null, chunk);
    },
    flush(done) {
      try {
        decoder.decode();
        done();
      } catch {
        done(notUtf8());
      }
    },
  });
  try {
    await pipeline(file, check, createWriteStream(path, { mode: 0o600 }));
  } catch (error) {
    await rm(path, { force: true });
    if (error instanceof AppException) throw error;
    // The client went away, or the form broke off: the client's error.
    throw AppException.validation([
      { field: 'file', message: 'did not arrive whole (the upload broke off)' },
    ]);
  }
  return path;
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
