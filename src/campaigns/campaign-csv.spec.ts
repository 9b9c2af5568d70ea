import { Readable } from 'node:stream';
import { AppException } from '../common/app.exception.js';
import { csvRows, sniffDelimiter } from './campaign-csv.js';

/** The text as a stream of small chunks, so that rows and characters straddle them. */
function chunks(text: string, size = 7): Readable {
  const bytes = Buffer.from(text);
  const parts: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) parts.push(bytes.subarray(at, at + size));
  return Readable.from(parts);
}

async function read(text: string, maxRows = 100) {
  const rows = [];
  for await (const row of csvRows(chunks(text), { to: 'phone' }, maxRows)) rows.push(row);
  return rows;
}

async function refusal(text: string, maxRows = 100): Promise<AppException> {
  try {
    await read(text, maxRows);
  } catch (error) {
    return error as AppException;
  }
  throw new Error('not refused');
}

describe('csvRows', () => {
  it('reads rows by their header, whatever the delimiter, across chunk boundaries', async () => {
    expect(await read('phone;name\n5511;"A; B"\n\n5512;C\n')).toEqual([
      { line: 2, cells: { phone: '5511', name: 'A; B' } },
      { line: 4, cells: { phone: '5512', name: 'C' } },
    ]);
    expect(await read('\uFEFFphone\tname\r\n5511\tA\r\n')).toEqual([
      { line: 2, cells: { phone: '5511', name: 'A' } },
    ]);
  });

  it('refuses more rows than its limit with 413', async () => {
    expect(await read('phone\n1\n2\n3\n', 3)).toHaveLength(3);
    const error = await refusal('phone\n1\n2\n3\n4\n', 3);
    expect(error.code).toBe('payload_too_large');
    expect(error.message).toBe('A CSV lists at most 3 recipients');
  });

  it('names where a quote was left open, and a mapped column the header lacks', async () => {
    // Opened on line 3, met at the end: the last row read whole says where to look.
    const rows = Array.from({ length: 50 }, (_, n) => `${n},B`).join('\n');
    const open = await refusal(`phone,name\n1,A\n2,"A\n${rows}\n`);
    expect(open.code).toBe('validation_failed');
    expect(open.details).toEqual([
      { field: 'file', message: expect.stringMatching(/^after line 2: .*quote/i) },
    ]);
    const missing = await refusal('telefone\n1\n');
    expect(missing.details).toEqual([
      {
        field: 'campaign.columns.to',
        message: 'names phone, which is not a column of the file (its header: telefone)',
      },
    ]);
  });

  it('sniffs the delimiter from the header', () => {
    expect(sniffDelimiter('a,b,c')).toBe(',');
    expect(sniffDelimiter('a;b;c')).toBe(';');
    expect(sniffDelimiter('a\tb')).toBe('\t');
    expect(sniffDelimiter('phone')).toBe(',');
  });
});
