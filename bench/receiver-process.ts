import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { EventReceiver } from '../simulator/event-receiver.js';

/** What the bench learns of one POST: the event's id, type and message, and when it came. */
export interface Receipt {
  id: string;
  type: string;
  /** The wamid of a message event, '' for the others. */
  wamid: string;
  createdAt: string;
  /** When the receiver read it (Date.now() in its own process, the same clock). */
  at: number;
  /** The raw body of the first message.received, for the bare forwarder to send copies of. */
  body?: string;
}

type Wire = [string, string, string, string, number, string?];

/**
 * The event receiver in a process of its own, as a subscriber's server is: a
 * receiver sharing the load generator's event loop answered late whenever the
 * generator was busy, and a lane holds a dispatcher slot until its answer.
 * Each receipt reaches the bench over IPC.
 */
export class ReceiverProcess {
  onReceipt?: (receipt: Receipt) => void;

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {
    child.on('message', (message: Wire) => {
      const [id, type, wamid, createdAt, at, body] = message;
      this.onReceipt?.({ id, type, wamid, createdAt, at, body });
    });
  }

  static async start(): Promise<ReceiverProcess> {
    const child = fork(fileURLToPath(import.meta.url), [], {
      env: { PATH: process.env.PATH, BENCH_RECEIVER_CHILD: '1' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const [url] = (await once(child, 'message')) as [string];
    return new ReceiverProcess(child, url);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.kill();
    await exited;
  }
}

async function child(): Promise<void> {
  const receiver = await EventReceiver.start({ record: false });
  let sampled = false;
  receiver.onEvent = ({ event, body, at }) => {
    const message = event.data?.message as { wamid?: string } | undefined;
    const wire: Wire = [event.id, event.type, message?.wamid ?? '', event.created_at, at];
    if (!sampled && event.type === 'message.received') {
      sampled = true;
      wire.push(body);
    }
    process.send!(wire);
  };
  process.send!(receiver.url);
  process.on('SIGTERM', () => void receiver.stop().then(() => process.exit(0)));
}

if (process.env.BENCH_RECEIVER_CHILD === '1') void child();
