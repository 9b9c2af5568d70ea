import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createConnection } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './ports.js';

async function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(port, '127.0.0.1');
    socket.setTimeout(500);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** A private redis-server on a free port, keeping nothing on disk: a restart comes back empty. */
export class RedisServer {
  private child?: ChildProcess;

  private constructor(readonly port: number) {}

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort());
    await server.launch();
    return server;
  }

  /** One to come on `port`, where nothing listens yet: launch() starts it. */
  static at(port: number): RedisServer {
    return new RedisServer(port);
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Kills it the hard way (SIGKILL): everything it held is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    child.kill('SIGKILL');
    await once(child, 'exit');
  }

  /** Starts it again on the same port, empty. */
  async launch(): Promise<void> {
    this.child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    for (let i = 0; i < 100; i++) {
      if (await answersPing(this.port)) return;
      await sleep(50);
    }
    throw new Error(`redis-server did not start on port ${this.port}`);
  }
}
