import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { waitUntil } from './wait.js';

export interface ToolProcess {
  child: ChildProcess;
  /** What it wrote to stdout so far. */
  stdout(): string;
  /** What it wrote to stdout and stderr so far, interleaved. */
  output(): string;
  /** Its exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /** Waits until its output matches `pattern`; throws with the output if it exits or time runs out. */
  waitForOutput(pattern: RegExp, ms?: number): Promise<RegExpMatchArray>;
  /** Sends `signal` (when it still runs) and waits for its exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `command` with `args` (a built tool: `process.execPath` and a script,
 * or bash) and collects its output. Only PATH and HOME are passed on from the
 * test's environment, then `env`.
 */
export function startTool(
  command: string,
  args: string[],
  env: Record<string, string | undefined> = {},
): ToolProcess {
  const child = spawn(command, args, {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return {
    child,
    stdout: () => stdout,
    output: () => output,
    exited,
    async waitForOutput(pattern, ms = 30_000) {
      const found = await waitUntil(
        () => pattern.test(output) || child.exitCode !== null || child.signalCode !== null,
        ms,
        25,
      );
      const match = output.match(pattern);
      if (!found || !match) throw new Error(`no ${String(pattern)} in the output:\n${output}`);
      return match;
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs `command` to its end (killed after `timeoutMs`): its exit code and output. */
export async function runTool(
  command: string,
  args: string[],
  env: Record<string, string | undefined> = {},
  timeoutMs = 60_000,
): Promise<{ code: number | null; stdout: string; output: string }> {
  const tool = startTool(command, args, env);
  const timer = setTimeout(() => tool.child.kill('SIGKILL'), timeoutMs);
  const code = await tool.exited;
  clearTimeout(timer);
  return { code, stdout: tool.stdout(), output: tool.output() };
}
