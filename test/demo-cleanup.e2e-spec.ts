import { Redis } from 'ioredis';
import { Client } from 'pg';
import { runTool, startTool } from './support/tool-process.js';

const DEMO = 'dist-tools/demo/demo.js';
const RESOURCES = /database (mc_demo_[0-9a-f]+) and Redis prefix (mcdemo[0-9a-f]+)/;

async function databaseExists(name: string): Promise<boolean> {
  const client = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    return rowCount === 1;
  } finally {
    await client.end();
  }
}

async function redisKeys(prefix: string): Promise<string[]> {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      keys.push(...found);
      cursor = next;
    } while (cursor !== '0');
    return keys;
  } finally {
    redis.disconnect();
  }
}

describe('npm run demo leaves nothing behind', () => {
  it('runs beside another demo, and each removes its own database and Redis keys, Ctrl-C included', async () => {
    // Demo A starts and is held (SIGSTOP) in the middle of its conversation…
    const first = startTool(process.execPath, [DEMO]);
    const interrupt = async (): Promise<number | null> => {
      first.child.kill('SIGINT');
      first.child.kill('SIGCONT');
      return first.exited;
    };
    try {
      const [, firstDatabase, firstPrefix] = await first.waitForOutput(RESOURCES, 60_000);
      first.child.kill('SIGSTOP');
      expect(await databaseExists(firstDatabase)).toBe(true);

      // …while demo B runs from start to end beside it.
      const second = await runTool(process.execPath, [DEMO], {}, 90_000);
      expect(second.output).toContain('agent answer: "Hi Ana!');
      expect(second.code).toBe(0);
      const [, secondDatabase, secondPrefix] = RESOURCES.exec(second.output)!;
      expect(secondDatabase).not.toBe(firstDatabase);
      expect(await databaseExists(secondDatabase)).toBe(false);
      expect(await redisKeys(secondPrefix)).toEqual([]);
      // B touched nothing of A's.
      expect(await databaseExists(firstDatabase)).toBe(true);

      // Ctrl-C on A: it stops its service and removes what it made.
      expect(await interrupt()).toBe(130);
      expect(first.output()).toContain('cleaning up');
      expect(await databaseExists(firstDatabase)).toBe(false);
      expect(await redisKeys(firstPrefix)).toEqual([]);
    } finally {
      // A test that failed midway still lets A clean up (its service is a process of its own).
      if (first.child.exitCode === null && first.child.signalCode === null) {
        const timer = setTimeout(() => first.child.kill('SIGKILL'), 20_000);
        await interrupt();
        clearTimeout(timer);
      }
    }
  }, 180_000);
});
