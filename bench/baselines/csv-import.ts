import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';
import pg from 'pg';

/**
 * The bare CSV import a campaign upload is measured against: the same file
 * read with the same parser, its rows written to a table with the same unique
 * addresses, 5,000 at a time through jsonb_to_recordset, in one transaction.
 * No form, no template check, no parameter check. Env: DATABASE_URL, FILE.
 * Prints the rows per second and exits.
 */
const env = process.env as Record<string, string>;
const db = new pg.Client({ connectionString: env.DATABASE_URL });
await db.connect();
await db.query(`DROP TABLE IF EXISTS bare_import`);
await db.query(`CREATE TABLE bare_import (seq int PRIMARY KEY, to_number text NOT NULL,
  parameters jsonb, UNIQUE (to_number))`);
const started = performance.now();
await db.query('BEGIN');
let batch: Array<{ to_number: string; parameters: Record<string, string> }> = [];
let seq = 0;
const flush = async () => {
  await db.query(
    `INSERT INTO bare_import (seq, to_number, parameters)
     SELECT $1 + r.n, r.to_number, r.parameters
     FROM ROWS FROM (jsonb_to_recordset($2::jsonb) AS (to_number text, parameters jsonb))
       WITH ORDINALITY AS r(to_number, parameters, n)
     ON CONFLICT DO NOTHING`,
    [seq, JSON.stringify(batch)],
  );
  seq += batch.length;
  batch = [];
};
const rows = createReadStream(env.FILE).pipe(parse({ columns: true, bom: true }));
for await (const row of rows as AsyncIterable<Record<string, string>>) {
  batch.push({ to_number: row.phone, parameters: { '1': row.name } });
  if (batch.length === 5000) await flush();
}
if (batch.length > 0) await flush();
await db.query('COMMIT');
const seconds = (performance.now() - started) / 1000;
await db.end();
process.stdout.write(`${Math.round(seq / seconds)}\n`);
