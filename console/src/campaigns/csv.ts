import Papa from 'papaparse';

/** What the browser reads of a campaign's list before it is sent: its header and first rows. */
export interface CsvHead {
  /** The separator found: `,`, `;` or a tab. */
  delimiter: string;
  /** The header's column names, trimmed (as the service names them). */
  columns: string[];
  /** The first rows, each cell by its column's name. */
  rows: Array<Record<string, string>>;
}

/** The rows read for the mapping and the preview: the preview shows the first three. */
const FIRST_ROWS = 5;

/**
 * Reads the header and the first rows of a CSV file in the browser, without
 * reading the whole file (a list may be 256 MB). Papa Parse, because it
 * detects the separator as the service accepts it (comma, semicolon, tab:
 * spreadsheets in Brazil export `;`) and reads quotes, doubled quotes, a BOM
 * and CRLF as RFC 4180 says, which a split on `,` would not. Cells are
 * trimmed and empty lines skipped, as the service reads them.
 */
export function readHead(file: File): Promise<CsvHead> {
  return new Promise((resolve, reject) => {
    Papa.parse<string[], File>(file, {
      preview: FIRST_ROWS + 1,
      skipEmptyLines: true,
      // The service's separators only (Papa Parse would also try `|` and others).
      delimitersToGuess: [',', ';', '\t'],
      transform: (value) => value.trim(),
      complete: (result) => {
        const [header, ...rows] = result.data;
        if (!header || header.every((name) => name === '')) {
          reject(new Error('empty'));
          return;
        }
        resolve({
          delimiter: result.meta.delimiter,
          columns: header,
          rows: rows.map((cells) =>
            Object.fromEntries(header.map((name, i) => [name, cells[i] ?? ''])),
          ),
        });
      },
      error: (error) => reject(error),
    });
  });
}
