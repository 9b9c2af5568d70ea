// Writes the migration that brings the database's functions and triggers to their current
// definitions (the `*.sql.ts` files beside the stores, listed in src/schema.ts), so nobody
// copies a function body by hand: it migrates a scratch database with every migration there
// is, compares (src/database/schema-diff.ts), runs the plan's up and down there in a
// transaction that is rolled back (verifyPlan: a plan that fails, or a down that does not
// restore, stops here, before any file is written), writes
// src/database/migrations/<time>-<name>.ts and lists it in migrations/index.ts.
// Usage: npm run sql:migration -- <Name> [--why "one line for the migration's doc"]
//        [--check] (writes nothing; exits 1 when a migration is needed)
//        [--database-url postgres://...] (the server for the scratch database)
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { register } from 'node:module';
import { parseArgs } from 'node:util';
import pg from 'pg';
import * as prettier from 'prettier';
import { DataSource } from 'typeorm';

register('./ts-hooks.js', import.meta.url);

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    why: { type: 'string' },
    check: { type: 'boolean', default: false },
    'database-url': {
      type: 'string',
      default: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    },
  },
});
const name = positionals[0];
if (!values.check && !/^[A-Z][A-Za-z0-9]+$/.test(name ?? '')) {
  process.stderr.write('usage: npm run sql:migration -- <PascalCaseName> [--why "..."]\n');
  process.exit(2);
}

/** @type {{ SCHEMA_SQL: unknown[] }} */
const { SCHEMA_SQL } = await import('../src/schema.ts');
/** @typedef {{ up: string[]; down: string[]; changes: string[] }} SchemaDiff */
/** @type {{ diffSchema(client: pg.Client, objects: unknown[]): Promise<SchemaDiff>; verifyPlan(client: pg.Client, objects: unknown[], diff: SchemaDiff): Promise<void> }} */
const { diffSchema, verifyPlan } = await import('../src/database/schema-diff.ts');
/** @type {{ MIGRATIONS: Function[] }} */
const { MIGRATIONS } = await import('../src/database/migrations/index.ts');

const serverUrl = values['database-url'];
const scratch = `mc_sqlgen_${randomBytes(6).toString('hex')}`;
const scratchUrl = serverUrl.replace(/\/[^/]*$/, `/${scratch}`);

async function onServer(sql) {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

await onServer(`CREATE DATABASE ${scratch}`);
let diff;
try {
  const source = new DataSource({ type: 'postgres', url: scratchUrl, migrations: MIGRATIONS });
  await source.initialize();
  try {
    await source.runMigrations({ transaction: 'each' });
  } finally {
    await source.destroy();
  }
  const client = new pg.Client({ connectionString: scratchUrl });
  await client.connect();
  try {
    diff = await diffSchema(client, SCHEMA_SQL);
    if (diff.changes.length > 0) await verifyPlan(client, SCHEMA_SQL, diff);
  } finally {
    await client.end();
  }
} finally {
  await onServer(`DROP DATABASE IF EXISTS ${scratch} WITH (FORCE)`);
}

if (diff.changes.length === 0) {
  process.stdout.write('the migrations already hold every current definition\n');
  process.exit(0);
}
if (values.check) {
  process.stdout.write(`a migration is needed:\n${diff.changes.map((c) => `  ${c}\n`).join('')}`);
  process.exit(1);
}

const time = Date.now();
const kebab = name.replace(/(?<=[a-z0-9])([A-Z])/g, '-$1').toLowerCase();
const className = `${name}${time}`;
const file = `src/database/migrations/${time}-${kebab}.ts`;
/** `text` in lines of at most `width` characters (a longer word stands alone). */
function wrap(text, width) {
  const lines = [];
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const last = lines.length - 1;
    if (last >= 0 && lines[last].length + 1 + word.length <= width) lines[last] += ` ${word}`;
    else lines.push(word);
  }
  return lines;
}

// One line per statement: the readable text is the current-state file's; this is its record.
const list = (statements) => statements.map((s) => `  ${JSON.stringify(s)},`).join('\n');
const doc = wrap((values.why ?? 'TODO: say why').replace(/\*\//g, '* /'), 86).join('\n * ');
/** Writes `text` to `path` as the repository's prettier settings format it. */
async function writeFormatted(path, text) {
  const options = await prettier.resolveConfig(path);
  await writeFile(path, await prettier.format(text, { ...options, filepath: path }));
}

/** `text` with `pattern`'s one match replaced; throws when the pattern is not found. */
function replaceOnce(text, pattern, replacement, what) {
  if (!pattern.test(text)) {
    throw new Error(`${indexFile}: ${what} not found (${pattern}); nothing was written`);
  }
  return text.replace(pattern, replacement);
}

// The index is edited in memory first, so a layout the edit does not recognise writes nothing.
const indexFile = 'src/database/migrations/index.ts';
const index = replaceOnce(
  replaceOnce(
    await readFile(indexFile, 'utf8'),
    /\n\n\/\*\*/,
    `\nimport { ${className} } from './${time}-${kebab}.js';\n\n/**`,
    'the blank line between the imports and the doc comment',
  ),
  /\n\];\n$/,
  `\n  ${className},\n];\n`,
  'the end of the MIGRATIONS list',
);

await writeFormatted(
  file,
  `import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * ${doc}
 *
 * Written by \`npm run sql:migration\` from the current definitions (src/schema.ts):
${diff.changes.map((c) => ` * - ${c}`).join('\n')}
 */
export class ${className} implements MigrationInterface {
  name = '${className}';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of UP) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const statement of DOWN) await queryRunner.query(statement);
  }
}

const UP = [
${list(diff.up)}
];

const DOWN = [
${list(diff.down)}
];
`,
);

await writeFormatted(indexFile, index);
process.stdout.write(`wrote ${file}:\n${diff.changes.map((c) => `  ${c}\n`).join('')}`);
