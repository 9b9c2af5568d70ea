// `npm run simulator`, `npm run simulate` and `npm run demo` start here:
//
//   node simulator/run-tool.js simulator [serve | message … | status … | template …]
//   node simulator/run-tool.js demo
//
// Runs the tool's compiled JavaScript from dist-tools/, compiling it first only
// when a file it is built from changed since its last build (so `npm run
// simulate -- --help` answers at once). Only the tool's own files are compiled
// (tsc follows its imports), into a scratch directory, then moved into
// dist-tools/ one rename each: nothing under dist-tools/ is ever deleted, and a
// simulator running from it is never left without its files. The demo also
// needs the built service (dist/main.js): `npm run build` runs first when a
// file under src/ is newer than it.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'dist-tools');
/** Where each tool's record of its last build lives: when, from which files, to which. */
const BUILDS = join(OUT, '.builds');

/** @type {Record<string, { entry: string, service?: boolean }>} */
const TOOLS = {
  simulator: { entry: 'simulator/cli.ts' },
  demo: { entry: 'demo/demo.ts', service: true },
};

/** @param {string} message @returns {never} */
function fail(message) {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/** @param {string} path @returns {number} the file's mtime, or Infinity when it is missing */
function modified(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Infinity;
  }
}

/**
 * @param {string} name
 * @returns {boolean} whether the tool's outputs are missing or older than a file they come from
 */
function isStale(name) {
  /** @type {{ builtAt: number, sources: string[], outputs: string[] }} */
  let build;
  try {
    build = JSON.parse(readFileSync(join(BUILDS, `${name}.json`), 'utf8'));
  } catch {
    return true;
  }
  return (
    build.sources.some((source) => modified(join(ROOT, source)) > build.builtAt) ||
    build.outputs.some((output) => !existsSync(join(ROOT, output)))
  );
}

/**
 * Compiles the tool's entry and what it imports with tsconfig.tools.json's
 * options, then moves each file into dist-tools/ and records the build.
 * @param {string} name
 */
function compile(name) {
  const { entry } = TOOLS[name];
  process.stderr.write(`compiling ${entry} and its imports into dist-tools/ (changed)\n`);
  const builtAt = Date.now();
  mkdirSync(BUILDS, { recursive: true });
  const scratch = mkdtempSync(join(OUT, '.build-'));
  try {
    const scratchOut = join(scratch, 'out');
    const config = {
      extends: join(ROOT, 'tsconfig.tools.json'),
      compilerOptions: { rootDir: ROOT, outDir: scratchOut, noEmitOnError: true },
      files: [join(ROOT, entry)],
      include: [],
    };
    writeFileSync(join(scratch, 'tsconfig.json'), JSON.stringify(config));
    const tsc = spawnSync(
      process.execPath,
      [
        join(ROOT, 'node_modules/typescript/bin/tsc'),
        '-p',
        join(scratch, 'tsconfig.json'),
        '--pretty',
        'false',
        '--listFiles',
        '--listEmittedFiles',
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    const lines = tsc.stdout.split('\n').filter(Boolean);
    const isPath = (line) => line.startsWith('TSFILE: ') || line.startsWith(sep);
    if (tsc.status !== 0) {
      const diagnostics = lines.filter((line) => !isPath(line)).join('\n');
      throw new Error(`compiling ${entry} failed:\n${diagnostics}\n${tsc.stderr}`);
    }
    const emitted = lines
      .filter((line) => line.startsWith('TSFILE: '))
      .map((line) => line.slice('TSFILE: '.length));
    const sources = lines
      .filter((line) => line.startsWith(ROOT + sep) && !line.includes(`${sep}node_modules${sep}`))
      .map((line) => relative(ROOT, line));
    const outputs = emitted.map((file) => {
      const target = join(OUT, relative(scratchOut, file));
      mkdirSync(dirname(target), { recursive: true });
      renameSync(file, target);
      return relative(ROOT, target);
    });
    const record = join(scratch, 'build.json');
    writeFileSync(
      record,
      JSON.stringify({
        builtAt,
        sources: [...sources, 'tsconfig.json', 'tsconfig.tools.json'],
        outputs,
      }),
    );
    renameSync(record, join(BUILDS, `${name}.json`));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** @param {string} dir @returns {number} the newest mtime of a file under dir */
function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) latest = Math.max(latest, modified(join(entry.parentPath, entry.name)));
  }
  return latest;
}

/** Builds the service (`npm run build`) when src/ has a file newer than dist/main.js. */
function buildServiceIfStale() {
  const built = modified(join(ROOT, 'dist/main.js'));
  if (built !== Infinity && newest(join(ROOT, 'src')) <= built) return;
  process.stderr.write('building the service (npm run build): src/ changed\n');
  const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) fail('npm run build failed');
}

const name = process.argv[2];
const tool = TOOLS[name ?? ''];
if (!tool) fail(`usage: node simulator/run-tool.js ${Object.keys(TOOLS).join('|')} [arguments]`);
if (tool.service) buildServiceIfStale();
if (isStale(name)) {
  try {
    compile(name);
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
}
// The tool reads its own arguments from process.argv, as if started directly.
process.argv.splice(2, 1);
await import(pathToFileURL(join(OUT, tool.entry.replace(/\.ts$/, '.js'))).href);
