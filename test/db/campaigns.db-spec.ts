import { randomUUID } from 'node:crypto';
import { CampaignStore, type NewCampaign } from '../../src/campaigns/campaign.store.js';
import { decodeCursor, encodeCursor } from '../../src/common/time-id-cursor.js';
import { ContactStore } from '../../src/contacts/contact.store.js';
import { MessageStore } from '../../src/messages/message.store.js';
import { insertInstance, insertSubscription, useMigratedDatabase } from './support.js';

const context = useMigratedDatabase();
let campaigns: CampaignStore;

beforeAll(async () => {
  campaigns = new CampaignStore(context.source);
  await insertSubscription(context.db, null, ['campaign.status']);
});

const fields = (instanceId: string, overrides: Partial<NewCampaign> = {}): NewCampaign => ({
  instanceId,
  name: 'Sale',
  templateId: `t-${randomUUID()}`,
  templateName: 'autumn_sale',
  templateLanguage: 'pt_BR',
  templateCategory: 'MARKETING',
  components: [],
  startAt: null,
  ratePerS: null,
  duplicates: 0,
  invalid: 0,
  ...overrides,
});
/** Past a retry_at of a millisecond from now (the database's clock decides). */
const waitUntilDue = () => context.db.query('SELECT pg_sleep(0.01)');
const numbers = (count: number, from = 0) =>
  Array.from({ length: count }, (_, n) => ({ to: `55119${String(from + n).padStart(8, '0')}` }));

describe('CampaignStore', () => {
  it('create, get, list: the campaign and its recipients numbered in order', async () => {
    const instanceId = await insertInstance(context.db);
    const first = await campaigns.create(fields(instanceId), numbers(3));
    const second = await campaigns.create(fields(instanceId, { name: 'Later' }), [
      { recipient: 'BR.ABC', parameters: { '1': 'Ana' } },
    ]);
    expect(first).toMatchObject({ state: 'draft', recipients: 3 });
    expect(await campaigns.get(first.id, instanceId)).toMatchObject({ id: first.id });
    expect(await campaigns.get(first.id, randomUUID())).toBeNull();
    const page = await campaigns.list(instanceId, null, 1);
    expect(page.map((c) => c.id)).toEqual([second.id]);
    const next = await campaigns.list(
      instanceId,
      decodeCursor(encodeCursor({ atMicros: page[0].position, id: page[0].id })),
      10,
    );
    expect(next.map((c) => c.id)).toEqual([first.id]);
    expect(
      (await campaigns.recipients(second.id, null, 0, 10)).map((r) => [
        r.seq,
        r.user_id,
        r.parameters,
      ]),
    ).toEqual([[1, 'BR.ABC', { '1': 'Ana' }]]);
  });

  it('createStreamed: batches in one transaction; a repeated address is left out and counted', async () => {
    const instanceId = await insertInstance(context.db);
    function* batches() {
      yield [...numbers(2), { recipient: 'BR.ABC' }];
      yield [...numbers(1, 1), { recipient: 'BR.ABC' }, ...numbers(1, 5)];
    }
    const { duplicates: _d, invalid: _i, ...shape } = fields(instanceId);
    const created = await campaigns.createStreamed(shape, batches(), (kept) => ({
      duplicates: 5 - kept,
      invalid: 1,
    }));
    expect(created).toMatchObject({ recipients: 4, duplicates: 1, invalid: 1 });
    // Its one creation event has the counts (the list was written before the row).
    expect(
      await context.db.query(`SELECT data FROM events WHERE lane = $1`, [`campaign:${created.id}`]),
    ).toEqual([
      {
        data: expect.objectContaining({
          state: 'draft',
          recipients: 4,
          duplicates: 1,
          invalid: 1,
        }),
      },
    ]);
    expect(
      (await campaigns.recipients(created.id, null, 0, 10)).map((r) => r.to_number ?? r.user_id),
    ).toEqual([numbers(1)[0].to, numbers(2)[1].to, 'BR.ABC', numbers(1, 5)[0].to]);

    // A refusal in `finish` (or a batch that throws) keeps nothing.
    const before = await context.db.query('SELECT count(*)::int AS n FROM campaigns');
    await expect(
      campaigns.createStreamed(shape, batches(), () => {
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    function* failing() {
      yield numbers(3, 10);
      throw new Error('broken file');
    }
    await expect(
      campaigns.createStreamed(shape, failing(), () => ({ duplicates: 0, invalid: 0 })),
    ).rejects.toThrow('broken file');
    expect(await context.db.query('SELECT count(*)::int AS n FROM campaigns')).toEqual(before);
  });

  it('sentWith: the campaign a sent wamid belongs to', async () => {
    const instanceId = await insertInstance(context.db);
    const campaign = await campaigns.create(fields(instanceId, { name: 'Natal' }), numbers(1, 900));
    await campaigns.transition(campaign.id, ['draft'], 'running');
    const [claimed] = await campaigns.claim(campaign.id, 'w', 1, 30);
    await campaigns.markSending(campaign.id, claimed.seq, 'w', 30);
    await campaigns.markSent(campaign.id, claimed.seq, `wamid.sw-${campaign.id}`);
    expect(await campaigns.sentWith(`wamid.sw-${campaign.id}`)).toEqual({
      id: campaign.id,
      name: 'Natal',
    });
    expect(await campaigns.sentWith('wamid.none')).toBeNull();
  });

  it("sentToday: the business account's campaign sends of the last 24 hours", async () => {
    const account = `acct-${randomUUID().slice(0, 8)}`;
    const instanceId = await insertInstance(context.db);
    await context.db.query('UPDATE instances SET channel_account_id = $2 WHERE id = $1', [
      instanceId,
      account,
    ]);
    const campaign = await campaigns.create(fields(instanceId), numbers(3, 950));
    await campaigns.transition(campaign.id, ['draft'], 'running');
    const claimed = await campaigns.claim(campaign.id, 'w', 3, 30);
    for (const r of claimed) {
      await campaigns.markSending(campaign.id, r.seq, 'w', 30);
      await campaigns.markSent(campaign.id, r.seq, `wamid.st${r.seq}-${campaign.id}`);
    }
    expect(await campaigns.sentToday(account)).toBe(3);
    await context.db.query(
      `UPDATE campaign_recipients SET sent_at = now() - interval '25 hours'
       WHERE campaign_id = $1 AND seq = $2`,
      [campaign.id, claimed[0].seq],
    );
    expect(await campaigns.sentToday(account)).toBe(2);
    expect(await campaigns.sentToday('another-account')).toBe(0);
  });

  it('requeue: a wait the next claim respects; a try that counts, in the same statement, ends it failed at the limit', async () => {
    const instanceId = await insertInstance(context.db);
    const campaign = await campaigns.create(fields(instanceId), numbers(2, 970));
    await campaigns.transition(campaign.id, ['draft'], 'running');
    const [first] = await campaigns.claim(campaign.id, 'w', 1, 30);
    expect(first.attempts).toBe(0);
    const failure = { code: 131000, message: 'Something went wrong' };
    const limit = { attempts: 2, spanS: 0 };
    const sendAgain = async () => {
      await campaigns.markSending(campaign.id, first.seq, 'w', 30);
      return campaigns.requeue(campaign.id, first.seq, 3600, failure, limit);
    };
    await campaigns.markSending(campaign.id, first.seq, 'w', 30);
    // An outage's try counts nothing.
    expect(await campaigns.requeue(campaign.id, first.seq, 3600, null, limit)).toBe('queued');
    // Waiting: the next claim passes over it.
    expect((await campaigns.claim(campaign.id, 'w', 5, 30)).map((r) => r.seq)).toEqual([
      first.seq + 1,
    ]);
    await context.db.query(
      `UPDATE campaign_recipients SET retry_at = NULL, state = 'claimed', worker = 'w'
       WHERE campaign_id = $1 AND seq = $2`,
      [campaign.id, first.seq],
    );
    expect(await sendAgain()).toBe('queued');
    await context.db.query(
      `UPDATE campaign_recipients SET state = 'claimed', worker = 'w' WHERE campaign_id = $1 AND seq = $2`,
      [campaign.id, first.seq],
    );
    expect(await sendAgain()).toBe('failed');
    const [failed] = await campaigns.recipients(campaign.id, 'failed', 0, 10);
    expect(failed).toMatchObject({
      seq: first.seq,
      reason: 'retries_exhausted',
      error_code: 131000,
      attempts: 2,
      retry_at: null,
    });
    // Not sending (anymore): nothing to put back.
    expect(await campaigns.requeue(campaign.id, first.seq, 0, failure, limit)).toBeNull();

    // The limit's span: 2 tries within it keep it queued.
    const other = await campaigns.create(fields(instanceId), numbers(1, 980));
    await campaigns.transition(other.id, ['draft'], 'running');
    const [again] = await campaigns.claim(other.id, 'w', 1, 30);
    for (let tries = 0; tries < 3; tries++) {
      await campaigns.markSending(other.id, again.seq, 'w', 30);
      expect(
        await campaigns.requeue(other.id, again.seq, 0.001, failure, { attempts: 2, spanS: 3600 }),
      ).toBe('queued');
      await waitUntilDue();
      expect((await campaigns.claim(other.id, 'w', 1, 30)).map((r) => r.seq)).toEqual([again.seq]);
    }
  });

  it('transition, startDue, running, stateOf: only from the allowed states; a due schedule runs', async () => {
    const instanceId = await insertInstance(context.db);
    const campaign = await campaigns.create(
      fields(instanceId, { startAt: new Date(Date.now() - 1000) }),
      numbers(1),
    );
    expect(await campaigns.transition(campaign.id, ['running'], 'paused', 'requested')).toBeNull();
    expect(await campaigns.transition(campaign.id, ['draft'], 'scheduled')).toMatchObject({
      state: 'scheduled',
    });
    expect(await campaigns.startDue()).toBeGreaterThanOrEqual(1);
    expect(await campaigns.stateOf(campaign.id)).toBe('running');
    expect((await campaigns.running()).map((c) => c.id)).toContain(campaign.id);
    const paused = await campaigns.transition(
      campaign.id,
      ['running'],
      'paused',
      'template_paused',
    );
    expect(paused).toMatchObject({ state: 'paused', pause_reason: 'template_paused' });
    const cancelled = await campaigns.transition(campaign.id, ['paused'], 'cancelled');
    expect(cancelled?.finished_at).toBeInstanceOf(Date);
  });

  it('claim, markSending, markSent, finish, release, requeue, completeIfDone: each recipient is taken by one worker', async () => {
    const instanceId = await insertInstance(context.db);
    const campaign = await campaigns.create(fields(instanceId), numbers(5));
    await campaigns.transition(campaign.id, ['draft'], 'running');
    const a = await campaigns.claim(campaign.id, 'w1', 3, 30);
    const b = await campaigns.claim(campaign.id, 'w2', 3, 30);
    expect([a.map((r) => r.seq), b.map((r) => r.seq)]).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    const mine = a[0];
    expect(await campaigns.markSending(campaign.id, mine.seq, 'w2', 30)).toBe(false);
    expect(await campaigns.markSending(campaign.id, mine.seq, 'w1', 30)).toBe(true);
    expect(await campaigns.markSending(campaign.id, mine.seq, 'w1', 30)).toBe(false);
    await campaigns.markSent(campaign.id, mine.seq, 'wamid.x1');
    await campaigns.finish(campaign.id, a[1].seq, 'skipped', 'opted_out');
    await campaigns.markSending(campaign.id, a[2].seq, 'w1', 30);
    await campaigns.requeue(campaign.id, a[2].seq);
    await campaigns.release(
      campaign.id,
      b.map((r) => r.seq),
      'w2',
    );
    expect(await campaigns.completeIfDone(campaign.id)).toBeNull();
    const rest = await campaigns.claim(campaign.id, 'w3', 10, 30);
    expect(rest.map((r) => r.seq).sort()).toEqual([a[2].seq, ...b.map((r) => r.seq)].sort());
    for (const r of rest) {
      await campaigns.markSending(campaign.id, r.seq, 'w3', 30);
      await campaigns.finish(campaign.id, r.seq, 'failed', 'platform_rejected', { code: 131026 });
    }
    expect(await campaigns.completeIfDone(campaign.id)).toMatchObject({ state: 'completed' });
    const progress = await campaigns.progress(campaign);
    expect(progress).toMatchObject({
      queued: 0,
      sent: 1,
      skipped: 1,
      failed: 3,
      failed_by_code: { '131026': 3 },
      skipped_by_reason: { opted_out: 1 },
    });
  });

  it('claim: workers racing for one campaign take each recipient once, and take what they say', async () => {
    const instanceId = await insertInstance(context.db);
    for (let round = 0; round < 20; round++) {
      const campaign = await campaigns.create(fields(instanceId), numbers(40));
      const taken = await Promise.all(
        ['w1', 'w2', 'w3'].map((worker) => campaigns.claim(campaign.id, worker, 15, 30)),
      );
      const seqs = taken.flat().map((r) => r.seq);
      expect(new Set(seqs).size).toBe(seqs.length);
      const [{ claimed }] = await context.db.query<{ claimed: number }>(
        `SELECT count(*)::int AS claimed FROM campaign_recipients
         WHERE campaign_id = $1 AND state = 'claimed'`,
        [campaign.id],
      );
      expect(claimed).toBe(seqs.length);
      expect(taken.every((claim) => claim.length <= 15)).toBe(true);
    }
  });

  it('recoverExpired: a dead worker’s claims go back to the queue, its sends in flight end send_uncertain', async () => {
    const instanceId = await insertInstance(context.db);
    const campaign = await campaigns.create(fields(instanceId), numbers(2));
    await campaigns.transition(campaign.id, ['draft'], 'running');
    const [one, two] = await campaigns.claim(campaign.id, 'dead', 2, 30);
    await campaigns.markSending(campaign.id, two.seq, 'dead', 30);
    await context.db.query(
      `UPDATE campaign_recipients SET lease_until = now() - interval '1 second' WHERE campaign_id = $1`,
      [campaign.id],
    );
    expect(await campaigns.recoverExpired()).toEqual({ requeued: 1, uncertain: 1 });
    const states = await campaigns.recipients(campaign.id, null, 0, 10);
    expect(states.map((r) => [r.seq, r.state, r.reason])).toEqual([
      [one.seq, 'queued', null],
      [two.seq, 'failed', 'send_uncertain'],
    ]);
    expect((await campaigns.recipients(campaign.id, 'queued', 0, 10)).map((r) => r.seq)).toEqual([
      one.seq,
    ]);
  });

  it("progress: delivered, read and replied from the sent messages' statuses and the contact's answers", async () => {
    const instanceId = await insertInstance(context.db);
    const messages = new MessageStore(context.source);
    const contacts = new ContactStore(context.source);
    const campaign = await campaigns.create(fields(instanceId), numbers(3, 700));
    await campaigns.transition(campaign.id, ['draft'], 'running');
    const claimed = await campaigns.claim(campaign.id, 'w', 3, 30);
    for (const [n, r] of claimed.entries()) {
      await campaigns.markSending(campaign.id, r.seq, 'w', 30);
      await campaigns.markSent(campaign.id, r.seq, `wamid.p${n}-${campaign.id}`);
      await messages.insertOutbound([
        {
          instanceId,
          address: r.to_number!,
          byNumber: true,
          sentBy: 'api',
          type: 'template',
          body: {},
          wamid: `wamid.p${n}-${campaign.id}`,
        },
      ]);
    }
    await messages.applyStatuses(instanceId, [
      {
        wamid: `wamid.p0-${campaign.id}`,
        recipient: claimed[0].to_number!,
        status: 'read',
        errors: null,
      },
      {
        wamid: `wamid.p1-${campaign.id}`,
        recipient: claimed[1].to_number!,
        status: 'delivered',
        errors: null,
      },
      {
        wamid: `wamid.p2-${campaign.id}`,
        recipient: claimed[2].to_number!,
        status: 'failed',
        errors: JSON.stringify([{ code: 131049 }]),
      },
    ]);
    const waId = claimed[0].to_number!;
    const resolved = await contacts.resolveContacts(instanceId, [
      {
        key: waId,
        waId,
        userId: null,
        parentUserId: null,
        username: null,
        name: 'A',
        lastInboundAt: new Date(),
      },
    ]);
    await messages.insertInbound(instanceId, true, [
      {
        wamid: `wamid.reply-${campaign.id}`,
        address: waId,
        contactId: resolved.get(waId)!,
        type: 'text',
        body: JSON.stringify({ type: 'text', text: { body: 'eu quero' } }),
        sentAt: new Date(),
        receivedAt: new Date(),
      },
    ]);
    expect(await campaigns.progress(campaign)).toMatchObject({
      sent: 2,
      delivered: 2,
      read: 1,
      replied: 1,
      failed: 1,
      failed_by_code: { '131049': 1 },
    });
    // recipients: the same failure, listed under failed with its code.
    const failed = await campaigns.recipients(campaign.id, 'failed', 0, 10);
    expect(failed.map((r) => [r.seq, r.state, r.error_code, r.delivery])).toEqual([
      [claimed[2].seq, 'failed', 131049, 'failed'],
    ]);
    expect((await campaigns.recipients(campaign.id, 'sent', 0, 10)).map((r) => r.delivery)).toEqual(
      ['read', 'delivered'],
    );
  });

  it('resume: the template’s category as it is now, an announced one first, only from paused', async () => {
    const instanceId = await insertInstance(context.db, { channelAccountId: 'acct-cat' });
    const campaign = await campaigns.create(
      fields(instanceId, { templateId: 'tpl-cat' }),
      numbers(1),
    );
    await context.db.query(
      `INSERT INTO templates (template_id, channel_account_id, status, status_at, category, pending_category)
       VALUES ('tpl-cat', 'acct-cat', 'APPROVED', now(), 'MARKETING', 'UTILITY')`,
    );
    expect(await campaigns.resume(campaign.id, 'running')).toBeNull();
    expect((await campaigns.get(campaign.id))?.template_category).toBe('MARKETING');
    await campaigns.transition(campaign.id, ['draft'], 'running');
    await campaigns.transition(campaign.id, ['running'], 'paused', 'template_category_changed');
    expect(await campaigns.resume(campaign.id, 'running')).toMatchObject({
      state: 'running',
      template_category: 'UTILITY',
      pause_reason: null,
    });
  });

  it('transition to cancelled: whoever was not sent to is skipped (cancelled) before the event counts them', async () => {
    const instanceId = await insertInstance(context.db);
    const campaign = await campaigns.create(fields(instanceId), numbers(3));
    await campaigns.transition(campaign.id, ['draft'], 'running');
    const [first] = await campaigns.claim(campaign.id, 'w', 1, 30);
    await campaigns.markSending(campaign.id, first.seq, 'w', 30);
    await campaigns.markSent(campaign.id, first.seq, `wamid.c-${campaign.id}`);
    await campaigns.claim(campaign.id, 'w', 1, 30);
    expect(await campaigns.transition(campaign.id, ['running'], 'cancelled')).toMatchObject({
      state: 'cancelled',
    });
    expect(await campaigns.progress(campaign)).toMatchObject({
      queued: 0,
      sent: 1,
      skipped: 2,
      skipped_by_reason: { cancelled: 2 },
    });
    // A worker that still held one cannot start sending it.
    const [held] = await campaigns.recipients(campaign.id, 'skipped', 0, 1);
    expect(await campaigns.markSending(campaign.id, held.seq, 'w', 30)).toBe(false);
  });

  it('markSending: nothing starts once the campaign is no longer running; markSent also settles an uncertain one', async () => {
    const instanceId = await insertInstance(context.db);
    const campaign = await campaigns.create(fields(instanceId), numbers(2));
    await campaigns.transition(campaign.id, ['draft'], 'running');
    const [a, b] = await campaigns.claim(campaign.id, 'w', 2, 30);
    expect(await campaigns.markSending(campaign.id, a.seq, 'w', 30)).toBe(true);
    await campaigns.transition(campaign.id, ['running'], 'paused', 'requested');
    expect(await campaigns.markSending(campaign.id, b.seq, 'w', 30)).toBe(false);
    await context.db.query(
      `UPDATE campaign_recipients SET lease_until = now() - interval '1 second' WHERE campaign_id = $1`,
      [campaign.id],
    );
    await campaigns.recoverExpired();
    await campaigns.markSent(campaign.id, a.seq, `wamid.late-${campaign.id}`);
    const [settled] = await campaigns.recipients(campaign.id, 'sent', 0, 10);
    expect(settled).toMatchObject({ seq: a.seq, reason: null, wamid: `wamid.late-${campaign.id}` });
  });
});

describe('ContactStore.optedOut', () => {
  it('names the numbers and user ids whose contact opted out, of this instance only', async () => {
    const instanceId = await insertInstance(context.db);
    const other = await insertInstance(context.db);
    const contacts = new ContactStore(context.source);
    const resolved = await contacts.resolveContacts(instanceId, [
      {
        key: '5511900000001',
        waId: '5511900000001',
        userId: 'BR.OUT1',
        parentUserId: null,
        username: null,
        name: 'A',
        lastInboundAt: new Date(),
      },
      {
        key: '5511900000002',
        waId: '5511900000002',
        userId: null,
        parentUserId: null,
        username: null,
        name: 'B',
        lastInboundAt: new Date(),
      },
    ]);
    await contacts.setOptOut([resolved.get('5511900000001')!], true);
    await contacts.resolveContacts(other, [
      {
        key: '5511900000002',
        waId: '5511900000002',
        userId: null,
        parentUserId: null,
        username: null,
        name: 'B',
        lastInboundAt: new Date(),
      },
    ]);
    expect(
      await contacts.optedOut(
        instanceId,
        ['5511900000001', '5511900000002', '5511900000009'],
        ['BR.OUT1'],
      ),
    ).toEqual(
      new Map([
        ['5511900000001', 'opted_out'],
        ['BR.OUT1', 'opted_out'],
      ]),
    );
    expect(await contacts.optedOut(other, ['5511900000001'], [])).toEqual(new Map());

    // A marketing stop counts only for marketing; a stop word wins over it.
    const at = new Date('2026-11-20T10:00:00Z');
    expect(await contacts.setMarketingPreference(instanceId, '5511900000002', true, at)).toBe(
      resolved.get('5511900000002'),
    );
    await contacts.setMarketingPreference(instanceId, '5511900000001', true, at);
    const numbers = ['5511900000001', '5511900000002'];
    expect(await contacts.optedOut(instanceId, numbers, [])).toEqual(
      new Map([['5511900000001', 'opted_out']]),
    );
    expect(await contacts.optedOut(instanceId, numbers, [], true)).toEqual(
      new Map([
        ['5511900000001', 'opted_out'],
        ['5511900000002', 'marketing_opted_out'],
      ]),
    );
  });
});

describe('ContactStore.setMarketingPreference', () => {
  it('applies the latest preference only; marketingOptedOut reads it by number or user id', async () => {
    const instanceId = await insertInstance(context.db);
    const contacts = new ContactStore(context.source);
    await contacts.resolveContacts(instanceId, [
      {
        key: '5511900000031',
        waId: '5511900000031',
        userId: 'BR.MKT1',
        parentUserId: null,
        username: null,
        name: 'C',
        lastInboundAt: null,
      },
    ]);
    const at = (minute: number) => new Date(`2026-11-20T10:${String(minute).padStart(2, '0')}:00Z`);
    await contacts.setMarketingPreference(instanceId, '5511900000031', true, at(10));
    expect(await contacts.marketingOptedOut(instanceId, '5511900000031', true)).toBe(true);
    expect(await contacts.marketingOptedOut(instanceId, 'BR.MKT1', false)).toBe(true);
    // An older resume, delivered late, changes nothing; a later one lifts it.
    expect(
      await contacts.setMarketingPreference(instanceId, '5511900000031', false, at(5)),
    ).toBeNull();
    expect(await contacts.marketingOptedOut(instanceId, '5511900000031', true)).toBe(true);
    await contacts.setMarketingPreference(instanceId, '5511900000031', false, at(20));
    expect(await contacts.marketingOptedOut(instanceId, '5511900000031', true)).toBe(false);
    // Unknown: nobody to mark.
    expect(
      await contacts.setMarketingPreference(instanceId, '5511900000099', true, at(30)),
    ).toBeNull();
    expect(await contacts.marketingOptedOut(instanceId, '5511900000099', true)).toBe(false);
  });
});

describe('mc_campaign_status', () => {
  it('writes a campaign.status on creation and on each change of state or pause reason, with counts at the end', async () => {
    const instanceId = await insertInstance(context.db);
    const campaign = await campaigns.create(fields(instanceId, { duplicates: 2 }), numbers(2));
    await campaigns.transition(campaign.id, ['draft'], 'running');
    await campaigns.touch(campaign.id);
    await campaigns.transition(campaign.id, ['running'], 'paused', 'template_paused');
    await campaigns.transition(campaign.id, ['paused'], 'cancelled');
    const found = await context.db.query<{ lane: string; data: Record<string, unknown> }>(
      `SELECT lane, data FROM events WHERE type = 'campaign.status' AND instance_id = $1 ORDER BY seq`,
      [instanceId],
    );
    expect(found.map((e) => [e.data.state, e.data.previous_state, e.data.pause_reason])).toEqual([
      ['draft', null, null],
      ['running', 'draft', null],
      ['paused', 'running', 'template_paused'],
      ['cancelled', 'paused', null],
    ]);
    expect(found[0].lane).toBe(`campaign:${campaign.id}`);
    expect(found[0].data).toMatchObject({ duplicates: 2, recipients: 2, counts: null });
    expect(found[3].data.counts).toEqual({ skipped: 2 });
  });
});
