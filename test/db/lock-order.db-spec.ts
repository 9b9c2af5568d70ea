import { randomUUID } from 'node:crypto';
import { sqlState } from '../../src/database/sql.js';
import { EventStore } from '../../src/events/event.store.js';
import { ContactStore } from '../../src/contacts/contact.store.js';
import { MessageStore } from '../../src/messages/message.store.js';
import { insertInstance, insertSubscription, useMigratedDatabase } from './support.js';

/** PostgreSQL's code for a transaction it ended to break a deadlock. */
const DEADLOCK_DETECTED = '40P01';

const ITERATIONS = 300;

/** Who waited for whom, and in which statement: PostgreSQL's account of a deadlock. */
function deadlockOf(error: unknown): string {
  const { detail, where } =
    (error as { driverError?: { detail?: string; where?: string } }).driverError ?? {};
  return `${detail ?? ''}\n${where ?? ''}`;
}

const EVENT_TYPES = ['message.received', 'message.sent', 'message.status', 'contact.handoff'];

/**
 * The writers that share contacts and event lanes (database/lock-order.ts),
 * each given the same two contacts in its own order, at the same time, again
 * and again: an inbound batch, an outbound record that also completes two
 * status placeholders, a status batch, pauses started and ended, the
 * dispatcher finishing the lanes (a failing subscription recovering), and an
 * admin disabling or enabling one subscription and deleting another.
 */
describe('lock order: contacts, then event lanes', () => {
  const context = useMigratedDatabase();
  let messages: MessageStore;
  let contactStore: ContactStore;
  let events: EventStore;
  let instanceId: string;
  let toggled: string;

  beforeAll(async () => {
    messages = new MessageStore(context.source);
    contactStore = new ContactStore(context.source);
    events = new EventStore(context.source);
    instanceId = await insertInstance(context.db);
    // Two subscribers: each event takes a lane of each.
    for (let n = 0; n < 2; n++) {
      toggled = await insertSubscription(context.db, null, EVENT_TYPES);
    }
  });

  /**
   * Rounds of the writers at once, each given the same two contacts (numbers
   * starting `prefix`) in its own order, flipped every round; `extra` prepares
   * a round's further writers. The deadlocks and other failures seen.
   */
  async function runRounds(
    prefix: string,
    options: {
      /** Finish the lanes with their deliveries delivered and their subscriptions healthy. */
      realAttempts?: boolean;
      extra?: (round: number) => Promise<(flip: boolean) => Array<Promise<unknown>>>;
    } = {},
  ): Promise<{ deadlocks: string[]; failures: unknown[] }> {
    const deadlocks: string[] = [];
    const failures: unknown[] = [];
    const settle = async (work: Promise<unknown>) => {
      try {
        await work;
      } catch (error) {
        if (sqlState(error) === DEADLOCK_DETECTED) deadlocks.push(deadlockOf(error));
        else failures.push(error);
      }
    };
    const identity = (waId: string) => ({
      key: waId,
      waId,
      userId: null,
      parentUserId: null,
      username: null,
      name: `Customer ${waId}`,
      lastInboundAt: new Date(),
    });
    const send = (waId: string, wamid: string) => ({
      instanceId,
      address: waId,
      byNumber: true,
      sentBy: 'api' as const,
      type: 'text',
      body: { text: { body: 'hello' } },
      wamid,
    });

    for (let i = 0; i < ITERATIONS; i++) {
      const extraWriters = await options.extra?.(i);
      const numbers = [`${prefix}${i}1`, `${prefix}${i}2`];
      const ids = await contactStore.resolveContacts(instanceId, numbers.map(identity));
      const contacts = numbers.map((n) => ids.get(n)!);
      // Sent before, now delivered; and two statuses that came before their sends' answers.
      const sent = numbers.map(() => `wamid.sent.${randomUUID()}`);
      const early = numbers.map(() => `wamid.early.${randomUUID()}`);
      await messages.insertOutbound(numbers.map((n, k) => send(n, sent[k])));
      await messages.applyStatuses(
        instanceId,
        numbers.map((n, k) => ({ wamid: early[k], recipient: n, status: 'sent', errors: null })),
      );
      const owner = randomUUID();
      const leased = await events.claim(owner, 100, 10, 60);
      const lanes = [...new Map(leased.map((d) => [`${d.subscription_id} ${d.lane}`, d])).values()];

      // Each writer takes the two contacts in an order of its own, which flips every round.
      const order = <T>(items: T[], flip: boolean): T[] => (flip ? [...items].reverse() : items);
      const flip = i % 2 === 0;
      await Promise.all([
        settle(
          (async () => {
            const resolved = await contactStore.resolveContacts(
              instanceId,
              order(numbers, flip).map(identity),
            );
            await messages.insertInbound(
              instanceId,
              true,
              order(numbers, flip).map((n) => ({
                wamid: `wamid.in.${randomUUID()}`,
                address: n,
                contactId: resolved.get(n)!,
                type: 'text',
                body: JSON.stringify({ text: { body: 'hi' } }),
                sentAt: new Date(),
                receivedAt: new Date(),
              })),
            );
          })(),
        ),
        settle(
          messages.insertOutbound(
            order(
              numbers.flatMap((n, k) => [send(n, early[k]), send(n, `wamid.new.${randomUUID()}`)]),
              !flip,
            ),
          ),
        ),
        settle(
          messages.applyStatuses(
            instanceId,
            order(numbers, !flip).map((n, k) => ({
              wamid: sent[flip ? 1 - k : k],
              recipient: n,
              status: 'delivered',
              errors: null,
            })),
          ),
        ),
        settle(
          contactStore.pauseForPeople(
            order(numbers, !flip).map((n) => ({ instanceId, address: n, byNumber: true })),
            60,
            0,
          ),
        ),
        settle(contactStore.endExpiredHandoffs()),
        settle(
          events.finish(
            order(lanes, flip).map((lane) => ({
              subscriptionId: lane.subscription_id,
              lane: lane.lane,
              owner,
              attempts: options.realAttempts
                ? leased
                    .filter(
                      (d) => d.subscription_id === lane.subscription_id && d.lane === lane.lane,
                    )
                    .map((d) => ({
                      seq: d.seq,
                      state: 'delivered' as const,
                      failures: 0,
                      status: 200,
                      response: null,
                      error: null,
                      nextAttemptAt: null,
                    }))
                : [],
              nextAttemptAt: new Date(),
            })),
            options.realAttempts ? [...new Set(lanes.map((lane) => lane.subscription_id))] : [],
          ),
        ),
        ...(extraWriters?.(flip) ?? []).map(settle),
      ]);
      expect(lanes.length).toBeGreaterThan(0);
      expect(new Set(contacts).size).toBe(2);
      // The next round starts with no lane pending (the counters' trigger removes them), and
      // this round's pauses over, for endExpiredHandoffs to end together with the others.
      await context.db.query('DELETE FROM event_deliveries');
      await context.db.query(`UPDATE contacts SET handoff_until = now() - interval '1 second'
                              WHERE handoff_until IS NOT NULL`);
      if (deadlocks.length > 0 || failures.length > 0) break;
    }

    return { deadlocks, failures };
  }

  it(`lets an inbound batch, an outbound record, a status batch, pauses started and ended and a lane finish run together ${ITERATIONS} times without a deadlock`, async () => {
    const { deadlocks, failures } = await runRounds('55119');
    expect(failures).toEqual([]);
    expect(deadlocks).toEqual([]);
  }, 120_000);

  it(`lets the same writers, a finish with real attempts, a subscription disabled or enabled and one deleted run together ${ITERATIONS} times without a deadlock`, async () => {
    const { deadlocks, failures } = await runRounds('55118', {
      realAttempts: true,
      extra: async () => {
        // A third subscriber, deleted during the round; and all of them failing, to recover.
        const doomed = await insertSubscription(context.db, null, EVENT_TYPES);
        await context.db.query('UPDATE event_subscriptions SET failing_since = now()');
        return (flip) => [events.update(toggled, { enabled: flip }), events.delete(doomed)];
      },
    });
    expect(failures).toEqual([]);
    expect(deadlocks).toEqual([]);
  }, 120_000);

  it(`lets the same writers and the phone app's pauses lifted run together ${ITERATIONS} times without a deadlock`, async () => {
    const prefix = '55117';
    const { deadlocks, failures } = await runRounds(prefix, {
      extra: async (round) => {
        const numbers = [`${prefix}${round}1`, `${prefix}${round}2`];
        const resolved = await contactStore.resolveContacts(
          instanceId,
          numbers.map((waId) => ({
            key: waId,
            waId,
            userId: null,
            parentUserId: null,
            username: null,
            name: null,
            lastInboundAt: null,
          })),
        );
        const ids = numbers.map((n) => resolved.get(n)!);
        // Paused as the phone app's, so that lifting them locks them.
        await contactStore.pauseForPeople(
          numbers.map((address) => ({ instanceId, address, byNumber: true, phoneApp: true })),
          60,
          0,
        );
        return (flip) => {
          const order = <T>(items: T[], reversed: boolean): T[] =>
            reversed ? [...items].reverse() : items;
          return [contactStore.liftEchoPauses(order(ids, flip), [], [])];
        };
      },
    });
    expect(failures).toEqual([]);
    expect(deadlocks).toEqual([]);
  }, 120_000);
});
