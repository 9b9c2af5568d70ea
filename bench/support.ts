import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { openSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitUntil } from '../test/support/wait.js';

export const PLATFORM_TOKEN = 'EAAG-bench-token';

/** The one template of the zero-latency platform's catalogue (campaigns send it). */
export const BENCH_TEMPLATE = {
  id: '990000000000001',
  name: 'bench_offer',
  language: 'pt_BR',
  status: 'APPROVED',
  category: 'MARKETING',
  components: [
    { type: 'BODY', text: 'Oi {{1}}, hoje tem oferta!', example: { body_text: [['Ana']] } },
  ],
};

/** A zero-latency platform: answers number reads, a one-template catalogue and sends; keeps only a counter. */
export async function startZeroLatencyPlatform(): Promise<{
  url: string;
  sends: () => number;
  close: () => Promise<void>;
}> {
  let sends = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.method === 'POST' && req.url?.endsWith('/messages')) {
        sends++;
        res.end(`{"messaging_product":"messenger","messages":[{"id":"wamid.bench${sends}"}]}`);
        return;
      }
      if (req.method === 'GET' && req.url?.includes('/message_templates')) {
        res.end(JSON.stringify({ data: [BENCH_TEMPLATE] }));
        return;
      }
      if (req.method === 'POST' && req.url?.endsWith('/media')) {
        res.end('{"id":"media-bench"}');
        return;
      }
      res.end(
        '{"display_phone_number":"+1 555 0100","verified_name":"Bench","quality_rating":"GREEN"}',
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sends: () => sends,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

export interface ServiceProcess {
  url: string;
  pid: number;
  /** Resident set size now and at its peak, in MiB. */
  memory(): { rssMiB: number; peakMiB: number };
  /** CPU time the process has used so far (user + system), in ms. */
  cpuMs(): number;
  stop(): Promise<number | null>;
}

/** The Node flags production runs the service with: those of package.json's start:prod. */
export function productionNodeFlags(): string[] {
  const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as {
    scripts: Record<string, string>;
  };
  const words = scripts['start:prod'].trim().split(/\s+/);
  return words.slice(1, words.indexOf('dist/main.js'));
}

/**
 * Runs the built service (dist/main.js) as its own process, with the Node
 * flags of production (`npm run start:prod`, the image); its logs go to /dev/null.
 */
export async function startService(
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<ServiceProcess> {
  const devNull = openSync('/dev/null', 'w');
  const child: ChildProcess = spawn(
    process.execPath,
    [...productionNodeFlags(), ...nodeArgs, 'dist/main.js'],
    { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', devNull, devNull] },
  );
  return watch(child, `http://${env.HOST}:${env.PORT}`);
}

/** Runs one of the bare baselines (bench/baselines) as its own process, until it says ready. */
export async function startBaseline(
  name: 'ack-server' | 'worker' | 'send-server',
  env: Record<string, string>,
): Promise<ServiceProcess> {
  const child: ChildProcess = spawn(process.execPath, [`dist-tools/bench/baselines/${name}.js`], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`baseline ${name} exited with ${code}`)));
  });
  return processHandle(child, `http://127.0.0.1:${env.PORT ?? 0}`);
}

async function watch(child: ChildProcess, url: string): Promise<ServiceProcess> {
  await waitUntil(
    async () => {
      if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}`);
      // Ready, not live: a process answers /health/live while it waits for PostgreSQL and Redis.
      return fetch(`${url}/health/ready`).then(
        (r) => r.ok,
        () => false,
      );
    },
    20_000,
    100,
  );
  return processHandle(child, url);
}

function processHandle(child: ChildProcess, url: string): ServiceProcess {
  const pid = child.pid!;
  return {
    url,
    pid,
    memory: () => {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const kib = (field: string) =>
        Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
      return { rssMiB: Math.round(kib('VmRSS') / 1024), peakMiB: Math.round(kib('VmHWM') / 1024) };
    },
    cpuMs: () => {
      // /proc/<pid>/stat: utime and stime are fields 14 and 15, in clock ticks (100 a second).
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return (Number(fields[11]) + Number(fields[12])) * 10;
    },
    stop: async () => {
      // A process that died already (out of memory, say) has nothing to stop.
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const [code] = (await once(child, 'exit')) as [number | null];
      return code;
    },
  };
}
