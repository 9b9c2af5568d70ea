import { loadConfig } from '../config/load-config.js';
import { PlatformError } from '../platform/platform.errors.js';
import { SendPacer } from './send-pacer.js';

/**
 * The pacer's decisions with its Redis scripts faked: what it does with each
 * answer of the slot script and each throttling error. The scripts themselves
 * run against Redis in the e2e tier (hardening-throttling, send).
 */
type Acquired = [0 | 1 | 2, number];

class FakePacingRedis {
  /** Answers of the slot script, in turn; then a free slot. */
  slots: Acquired[] = [];
  slotCalls = 0;
  down = false;
  numberThrottledArgs: unknown[][] = [];
  pairThrottledArgs: unknown[][] = [];
  numberPauseMs = 4000;

  /** The campaign slot script: answers of its own, in turn; then a free slot. */
  campaignSlots: Acquired[] = [];
  campaignSlot(): Promise<Acquired> {
    return Promise.resolve(this.campaignSlots.shift() ?? [0, 0]);
  }

  acquireSendSlot(): Promise<Acquired> {
    this.slotCalls++;
    if (this.down) return Promise.reject(new Error('Connection is closed.'));
    return Promise.resolve(this.slots.shift() ?? [0, 0]);
  }

  numberThrottled(...args: unknown[]): Promise<number> {
    this.numberThrottledArgs.push(args);
    return Promise.resolve(this.numberPauseMs);
  }

  pairThrottled(...args: unknown[]): Promise<number> {
    this.pairThrottledArgs.push(args);
    return Promise.resolve(6000);
  }
}

describe('SendPacer (Redis scripts faked)', () => {
  const { config } = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent' });
  let redis: FakePacingRedis;
  let pacer: SendPacer;
  let sends: number;
  const send = () => {
    sends++;
    return Promise.resolve('wamid.sent');
  };
  const failing = (failure: ConstructorParameters<typeof PlatformError>[0]) => () => {
    sends++;
    return Promise.reject(new PlatformError(failure));
  };
  const caught = async (run: Promise<unknown>): Promise<PlatformError> => {
    try {
      await run;
    } catch (error) {
      if (error instanceof PlatformError) return error;
      throw error;
    }
    throw new Error('expected a PlatformError');
  };

  beforeEach(() => {
    redis = new FakePacingRedis();
    // The pacer takes Redis with its scripts defined; the fake answers as they would.
    pacer = new SendPacer(redis as never, config);
    sends = 0;
  });

  it('sends at once when a slot is free', async () => {
    await expect(pacer.run('PN', '5511', send)).resolves.toBe('wamid.sent');
    expect([redis.slotCalls, sends]).toEqual([1, 1]);
  });

  it('waits for a reserved slot, and for a paused number to resume', async () => {
    redis.slots = [
      [1, 60],
      [0, 40],
    ];
    const started = Date.now();
    await pacer.run('PN', '5511', send);
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
    expect([redis.slotCalls, sends]).toEqual([2, 1]);
  });

  it('answers rate_limited with the real wait when the queue is too long, without sending', async () => {
    redis.slots = [[2, 7200]];
    const error = await caught(pacer.run('PN', '5511', send));
    expect(error.code).toBe('platform_rate_limited');
    expect(error.failure.retryAfterSeconds).toBe(8);
    expect(sends).toBe(0);
  });

  it('sends unpaced when Redis cannot be asked', async () => {
    redis.down = true;
    await expect(pacer.run('PN', '5511', send)).resolves.toBe('wamid.sent');
    expect(sends).toBe(1);
  });

  it('pauses a throttled number for its Retry-After and says how long', async () => {
    const error = await caught(
      pacer.run(
        'PN',
        '5511',
        failing({ kind: 'rate_limited', platformCode: 130429, retryAfterSeconds: 3 }),
      ),
    );
    expect(redis.numberThrottledArgs).toHaveLength(1);
    expect(redis.numberThrottledArgs[0][3]).toBe(3000);
    expect(error.failure).toMatchObject({ kind: 'rate_limited', platformCode: 130429 });
    expect(error.failure.retryAfterSeconds).toBe(4);
  });

  it('spaces sends to a user the platform says gets too much', async () => {
    const error = await caught(
      pacer.run('PN', '5511', failing({ kind: 'rate_limited', platformCode: 131056 })),
    );
    expect(redis.pairThrottledArgs).toHaveLength(1);
    expect(String(redis.pairThrottledArgs[0][0])).toContain('5511');
    expect(error.failure.retryAfterSeconds).toBe(6);
  });

  it("stops a campaign's wait for its next slot when the process shuts down, sending nothing", async () => {
    // The campaign's own rate: its next send an hour away.
    redis.campaignSlots = [[1, 3_600_000]];
    const stopping = new AbortController();
    const waiting = pacer.runCampaign('PN', 'c1', 0.1, '5511', send, null, stopping.signal);
    stopping.abort(new Error('shutting down'));
    await expect(waiting).rejects.toThrow();
    expect(sends).toBe(0);
  });

  it('passes other refusals on unchanged', async () => {
    const refusal = { kind: 'rejected' as const, platformCode: 131026, httpStatus: 400 };
    const error = await caught(pacer.run('PN', '5511', failing(refusal)));
    expect(error.failure).toEqual(refusal);
    expect(redis.numberThrottledArgs.length + redis.pairThrottledArgs.length).toBe(0);
  });
});
