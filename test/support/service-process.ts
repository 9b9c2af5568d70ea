import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from './ports.js';
import { testEnvironment } from './test-app.js';
import { waitUntil } from './wait.js';

/** The built service (`npm test` builds first). */
const MAIN = 'dist/main.js';

export interface ServiceProcess {
  url: string;
  pid: number;
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  exited: Promise<number | null>;
  /** SIGKILL: the process dies mid-work, as in an OOM kill or a lost node. */
  kill(): Promise<void>;
  /** SIGTERM, and the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Runs the built service as its own process with the test environment plus
 * `overrides`, and waits until it is ready (/health/ready 200), or with
 * `until: 'live'` only until it answers /health/live (it does while it waits
 * for PostgreSQL and Redis).
 */
export async function startServiceProcess(
  overrides: Record<string, string>,
  { until = 'ready' }: { until?: 'live' | 'ready' } = {},
): Promise<ServiceProcess> {
  const port = overrides.PORT ?? String(await freePort());
  const env = { ...testEnvironment({ HOST: '127.0.0.1', PORT: port, ...overrides }) };
  let output = '';
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const url = `http://127.0.0.1:${port}`;
  // Until it answers, or exits.
  const live = await waitUntil(
    async () =>
      child.exitCode !== null ||
      (await fetch(`${url}/health/${until}`).then(
        (answer) => answer.ok,
        () => false,
      )),
    15_000,
    50,
  );
  if (!live || child.exitCode !== null) {
    child.kill('SIGKILL');
    throw new Error(`service did not start:\n${output}`);
  }
  return {
    url,
    pid: child.pid!,
    child,
    output: () => output,
    exited,
    kill: async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
