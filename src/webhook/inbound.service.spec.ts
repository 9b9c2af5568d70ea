import { loadConfig } from '../config/load-config.js';
import { EventWake } from '../events/event-wake.js';
import type { BufferSpan, ContactBuffer } from '../turns/buffer/contact-buffer.js';
import type { Instance } from '../instances/instance.types.js';
import type { InstancesService } from '../instances/instances.service.js';
import type { IdentityRow } from '../contacts/contact-identity.js';
import type { ContactStore } from '../contacts/contact.store.js';
import type { OptOuts } from '../contacts/opt-outs.js';
import type { InboundRow, InsertedInbound, MessageStore } from '../messages/message.store.js';
import type { MessagesService } from '../messages/messages.service.js';
import type { HistoryStore } from '../history/history.store.js';
import type { StatusRow } from '../messages/message.types.js';
import { MetricsService } from '../metrics/metrics.service.js';
import type { WebhookDelivery } from '../queue/queues.js';
import type { TemplateEvent } from '../templates/template.types.js';
import type { TemplateStore } from '../templates/template.store.js';
import { InboundService } from './inbound.service.js';

/**
 * The pipeline's rules with its stores faked: what InboundService asks the
 * stores to write for a batch of deliveries, and what it reports. The same
 * paths run against PostgreSQL in the e2e tier.
 */
const INSTANCE = { id: 'i-1', phone_number_id: 'PN1', is_active: true } as Instance;
const ARRIVED = Date.UTC(2026, 10, 23, 12);

/** An error as node-postgres raises it for a value PostgreSQL refuses. */
const refused = () => Object.assign(new Error('invalid input'), { code: '22P02' });

class FakeContactStore {
  resolveContacts(_instanceId: string, identities: IdentityRow[]): Promise<Map<string, string>> {
    return Promise.resolve(new Map(identities.map((i) => [i.key, `c-${i.waId ?? i.userId}`])));
  }

  rekeyContact(): Promise<string | null> {
    return Promise.resolve(null);
  }
}

class FakeMessageStore {
  inserted: InboundRow[][] = [];
  statuses: StatusRow[][] = [];
  /** wamids the store refuses (a data error), as PostgreSQL would. */
  refuse = new Set<string>();
  /** wamids stored before: skipped by the insert. */
  known = new Set<string>();

  insertInbound(_id: string, _await: boolean, rows: InboundRow[]): Promise<InsertedInbound[]> {
    if (rows.some((row) => this.refuse.has(row.wamid) && !row.body.includes('"unstorable":true'))) {
      return Promise.reject(refused());
    }
    this.inserted.push(rows);
    const fresh = rows.filter((row) => !this.known.has(row.wamid));
    const byContact = new Map<string, InboundRow[]>();
    for (const row of fresh)
      byContact.set(row.contactId, [...(byContact.get(row.contactId) ?? []), row]);
    return Promise.resolve(
      [...byContact].map(([contact_id, stored]) => ({
        contact_id,
        stored: stored.length,
        first: stored[0].receivedAt,
        last: stored[stored.length - 1].receivedAt,
        waited: false,
        words: stored.filter((row) => row.answer === false).map((row) => row.wamid),
      })),
    );
  }

  applyStatuses(_instanceId: string, rows: StatusRow[]): Promise<void> {
    this.statuses.push(rows);
    return Promise.resolve();
  }
}

describe('InboundService (stores faked)', () => {
  let messages: FakeMessageStore;
  let templates: TemplateEvent[];
  let scheduled: Array<{ contacts: Array<{ contactId: string }>; started: BufferSpan[] }>;
  let activeAccounts: Set<string>;
  let inbound: InboundService;

  beforeEach(() => {
    messages = new FakeMessageStore();
    templates = [];
    scheduled = [];
    activeAccounts = new Set(['WABA1']);
    const instances = {
      findByPhoneNumberId: (id: string) =>
        Promise.resolve(
          id === 'PN1' ? INSTANCE : id === 'PN2' ? { ...INSTANCE, is_active: false } : null,
        ),
      hasActiveInstanceFor: (account: string) => Promise.resolve(activeAccounts.has(account)),
      agentEnabled: () => true,
    } as unknown as InstancesService;
    const buffer = {
      scheduleAll: (contacts: Array<{ contactId: string }>, started: BufferSpan[]) => {
        scheduled.push({ contacts, started });
        return Promise.resolve();
      },
    } as unknown as ContactBuffer;
    const templateStore = {
      record: (event: TemplateEvent) => {
        templates.push(event);
        return Promise.resolve();
      },
    } as unknown as TemplateStore;
    inbound = new InboundService(
      instances,
      buffer,
      messages as unknown as MessageStore,
      { storeEchoes: () => Promise.resolve([]) } as unknown as MessagesService,
      new FakeContactStore() as unknown as ContactStore,
      templateStore,
      { record: () => Promise.resolve(true) } as unknown as HistoryStore,
      new MetricsService(),
      new EventWake(),
      { set: () => Promise.resolve([]) } as unknown as OptOuts,
      loadConfig({}).config,
    );
  });

  const delivery = (value: Record<string, unknown>, field = 'messages'): WebhookDelivery => ({
    body: JSON.stringify({ object: 'x', entry: [{ id: 'WABA1', changes: [{ field, value }] }] }),
    receivedAt: ARRIVED,
  });
  const text = (id: string, from: string) => ({
    id,
    from,
    timestamp: '1795000000',
    type: 'text',
    text: { body: id },
  });
  const messagesOf = (phoneNumberId: string, ...items: unknown[]) =>
    delivery({ metadata: { phone_number_id: phoneNumberId }, messages: items });

  it('stores a batch in one insert per instance and arms the buffers it started', async () => {
    const result = await inbound.processBatch([
      messagesOf('PN1', text('wamid.a', '5511'), text('wamid.b', '5522')),
      messagesOf('PN1', text('wamid.c', '5511')),
    ]);
    expect(result).toMatchObject({ stored: 3, duplicates: 0, invalid: 0 });
    expect(messages.inserted).toHaveLength(1);
    expect(messages.inserted[0].map((row) => [row.wamid, row.contactId])).toEqual([
      ['wamid.a', 'c-5511'],
      ['wamid.b', 'c-5522'],
      ['wamid.c', 'c-5511'],
    ]);
    expect(scheduled).toHaveLength(1);
    expect(scheduled[0].started.map((span) => span.contactId).sort()).toEqual(['c-5511', 'c-5522']);
  });

  it('counts re-sent messages as duplicates and re-checks their contacts’ buffers', async () => {
    messages.known.add('wamid.a');
    const result = await inbound.processBatch([messagesOf('PN1', text('wamid.a', '5511'))]);
    expect(result).toMatchObject({ stored: 0, duplicates: 1 });
    expect(scheduled[0].contacts).toEqual([{ instanceId: 'i-1', contactId: 'c-5511' }]);
  });

  it('stores a message PostgreSQL refuses without its content, and the others whole', async () => {
    messages.refuse.add('wamid.bad');
    const result = await inbound.processBatch([
      messagesOf('PN1', text('wamid.ok', '5511'), text('wamid.bad', '5511')),
    ]);
    expect(result).toMatchObject({ stored: 2, invalid: 0 });
    const stored = messages.inserted.flat();
    expect(stored.find((row) => row.wamid === 'wamid.ok')?.body).toContain('"body":"wamid.ok"');
    expect(stored.find((row) => row.wamid === 'wamid.bad')?.body).toContain('"unstorable":true');
  });

  it('skips unknown and deactivated numbers and unreadable deliveries, counting each', async () => {
    const result = await inbound.processBatch([
      messagesOf('PN9', text('wamid.x', '5511')),
      messagesOf('PN2', text('wamid.y', '5511')),
      { body: '{not json', receivedAt: ARRIVED },
    ]);
    expect(result).toMatchObject({ stored: 0, unrouted: 1, inactive: 1, invalid: 1 });
    expect(messages.inserted).toHaveLength(0);
  });

  it('applies only the furthest status of each message', async () => {
    await inbound.processBatch([
      delivery({
        metadata: { phone_number_id: 'PN1' },
        statuses: [
          { id: 'wamid.s', status: 'read', recipient_id: '5511', timestamp: '1795000001' },
          { id: 'wamid.s', status: 'delivered', recipient_id: '5511', timestamp: '1795000000' },
        ],
      }),
    ]);
    expect(messages.statuses).toEqual([
      [expect.objectContaining({ wamid: 'wamid.s', status: 'read', recipient: '5511' })],
    ]);
  });

  it('records template events only for accounts with an active instance', async () => {
    const event = { event: 'APPROVED', message_template_id: 42, message_template_name: 'hello' };
    const first = await inbound.processBatch([delivery(event, 'message_template_status_update')]);
    activeAccounts.clear();
    const second = await inbound.processBatch([delivery(event, 'message_template_status_update')]);
    expect(first.templateEvents).toBe(1);
    expect(second).toMatchObject({ templateEvents: 0, unrouted: 1 });
    expect(templates).toEqual([
      expect.objectContaining({ channelAccountId: 'WABA1', templateId: '42', event: 'APPROVED' }),
    ]);
  });
});
