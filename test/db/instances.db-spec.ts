import { randomUUID } from 'node:crypto';
import { ApiKeyStore } from '../../src/auth/api-key.store.js';
import { sqlState, UNIQUE_VIOLATION } from '../../src/database/sql.js';
import { InstanceStore, type NewInstance } from '../../src/instances/instance.store.js';
import { TemplateStore } from '../../src/templates/template.store.js';
import type { SyncedTemplate } from '../../src/templates/template.types.js';
import type { TemplateEvent } from '../../src/templates/template.types.js';
import { insertInstance, insertSubscription, useMigratedDatabase } from './support.js';

/**
 * Instances, API keys and templates: their stores, and the triggers that
 * report an instance's status and a template's. A subscription for every
 * instance wants both event types, so their events are kept.
 */
const context = useMigratedDatabase();
let instances: InstanceStore;
let apiKeys: ApiKeyStore;
let templates: TemplateStore;

beforeAll(async () => {
  instances = new InstanceStore(context.source);
  apiKeys = new ApiKeyStore(context.source);
  templates = new TemplateStore(context.source);
  await insertSubscription(context.db, null, ['instance.status', 'template.status']);
});

let numbers = 0;

/** A key hash (64 hex digits) of its own. */
const hash = () => randomUUID().replace(/-/g, '') + randomUUID().replace(/-/g, '');

function newInstance(fields: Partial<NewInstance> = {}): NewInstance {
  const id = randomUUID();
  return {
    id,
    name: 'Loja',
    phone_number_id: `${Date.now()}${String(++numbers).padStart(4, '0')}`,
    channel_account_id: `acct-${randomUUID()}`,
    business_id: null,
    platform_app_id: null,
    access_token_encrypted: `token-${id}`,
    token_type: 'system_user',
    display_phone_number: '+55 11 99999-0000',
    verified_name: 'Loja',
    quality_rating: null,
    messaging_limit_tier: null,
    is_active: true,
    status: 'connected',
    webhook_verify_token: `verify-${id}`,
    ...fields,
  };
}

async function statusEvents(instanceId: string) {
  const found = await context.db.query<{ lane: string; data: Record<string, unknown> }>(
    `SELECT lane, data FROM events WHERE type = 'instance.status' AND instance_id = $1 ORDER BY seq`,
    [instanceId],
  );
  return found;
}

describe('InstanceStore', () => {
  it('setSendRateByDisplayNumber: the number named by its display number, in any format, once', async () => {
    const upgraded = await instances.insert(
      newInstance({ display_phone_number: '+1 555-078-3881' }),
    );
    const other = await instances.insert(newInstance({ display_phone_number: '+1 555-078-3882' }));
    const changed = await instances.setSendRateByDisplayNumber('15550783881', 1000);
    expect(changed.map((instance) => [instance.id, instance.send_rate])).toEqual([
      [upgraded.id, 1000],
    ]);
    expect(await instances.setSendRateByDisplayNumber('15550783881', 1000)).toEqual([]);
    expect((await instances.findById(other.id))?.send_rate).toBeNull();
  });

  it('markCoexistence: the number shared with the phone app, once', async () => {
    const shared = await instances.insert(newInstance());
    const other = await instances.insert(newInstance());
    expect(shared.coexistence).toBe(false);
    expect(await instances.markCoexistence(shared.phone_number_id)).toMatchObject({
      id: shared.id,
      coexistence: true,
    });
    expect(await instances.markCoexistence(shared.phone_number_id)).toBeNull();
    expect((await instances.findById(other.id))?.coexistence).toBe(false);
  });

  it('setDailyLimit: every instance of the business account, once; unlimited is null', async () => {
    const account = `acct-${randomUUID()}`;
    const a = await instances.insert(newInstance({ channel_account_id: account }));
    const b = await instances.insert(newInstance({ channel_account_id: account }));
    const other = await instances.insert(newInstance());
    const changed = await instances.setDailyLimit(account, 2000);
    expect(changed.map((instance) => [instance.id, instance.daily_limit]).sort()).toEqual(
      [
        [a.id, 2000],
        [b.id, 2000],
      ].sort(),
    );
    expect(await instances.setDailyLimit(account, 2000)).toEqual([]);
    expect((await instances.findById(other.id))?.daily_limit).toBeNull();
    // insert: a new number of the account knows the business's limit from the start.
    const later = await instances.insert(newInstance({ channel_account_id: account }));
    expect(later.daily_limit).toBe(2000);
    expect((await instances.setDailyLimit(account, null)).map((i) => i.daily_limit)).toEqual([
      null,
      null,
      null,
    ]);
  });

  it('inserts an instance with the defaults, and refuses a second one for the number', async () => {
    const fields = newInstance();
    const created = await instances.insert(fields);
    expect(created).toMatchObject({
      ...fields,
      token_rejected_at: null,
      agent_enabled: true,
      agent_url: null,
      agent_token_encrypted: null,
      agent_buffer_delay_s: null,
      agent_buffer_max_wait_s: null,
      agent_typing_indicator: null,
      daily_limit: null,
      coexistence: false,
      created_at: expect.any(Date),
    });
    const again = instances.insert(newInstance({ phone_number_id: fields.phone_number_id }));
    expect(sqlState(await again.catch((error: unknown) => error))).toBe(UNIQUE_VIOLATION);
  });

  it('lists and finds instances by id and by number', async () => {
    const a = await instances.insert(newInstance());
    const b = await instances.insert(newInstance());
    const listed = (await instances.list()).map((i) => i.id);
    expect(listed.indexOf(a.id)).toBeGreaterThanOrEqual(0);
    expect(listed.indexOf(b.id)).toBeGreaterThan(listed.indexOf(a.id));
    expect(await instances.findById(a.id)).toEqual(a);
    expect(await instances.findById(randomUUID())).toBeNull();
    expect(await instances.findByPhoneNumberId(b.phone_number_id)).toEqual(b);
    expect(await instances.findByPhoneNumberId('0')).toBeNull();
  });

  it('tells whether a number, a verify token or an account’s active instance exists', async () => {
    const active = await instances.insert(newInstance());
    const inactive = await instances.insert(newInstance({ is_active: false }));
    expect(await instances.numberTaken(active.phone_number_id)).toBe(true);
    expect(await instances.numberTaken(`${active.phone_number_id}9`)).toBe(false);
    expect(await instances.verifyTokenExists(active.webhook_verify_token)).toBe(true);
    expect(await instances.verifyTokenExists(`${active.webhook_verify_token}x`)).toBe(false);
    expect(await instances.activeForAccount(active.channel_account_id)).toBe(true);
    expect(await instances.activeForAccount(inactive.channel_account_id)).toBe(false);
    expect(await instances.activeForAccount('unknown')).toBe(false);
  });

  it('updates the given columns only, and answers null for an unknown instance', async () => {
    const created = await instances.insert(newInstance());
    const updated = await instances.update(created.id, {
      name: 'Outra',
      agent_url: 'https://agent.test/hook',
      agent_buffer_delay_s: 3,
    });
    expect(updated).toEqual({
      ...created,
      name: 'Outra',
      agent_url: 'https://agent.test/hook',
      agent_buffer_delay_s: 3,
      updated_at: expect.any(Date),
    });
    expect(updated!.updated_at.getTime()).toBeGreaterThanOrEqual(created.updated_at.getTime());
    expect(await instances.update(created.id, {})).toMatchObject({ name: 'Outra' });
    expect(await instances.update(randomUUID(), { name: 'x' })).toBeNull();
  });

  it('deletes an instance with its API keys, once', async () => {
    const created = await instances.insert(newInstance());
    const key = await apiKeys.insert({
      name: 'k',
      instance_id: created.id,
      key_hash: hash(),
      prefix: 'mc_k',
    });
    expect(await instances.delete(created.id)).toBe(true);
    expect(await instances.findById(created.id)).toBeNull();
    expect(await apiKeys.findByHash(key.key_hash)).toBeNull();
    expect(await instances.delete(created.id)).toBe(false);
  });

  it('marks the token rejected once', async () => {
    const created = await instances.insert(newInstance());
    expect(await instances.markTokenRejected(created.id)).toBe(true);
    const marked = await instances.findById(created.id);
    expect(marked!.token_rejected_at).toBeInstanceOf(Date);
    expect(await instances.markTokenRejected(created.id)).toBe(false);
    expect((await instances.findById(created.id))!.token_rejected_at).toEqual(
      marked!.token_rejected_at,
    );
    expect(await instances.markTokenRejected(randomUUID())).toBe(false);
  });

  it('lists access tokens and the agent tokens that are set, and replaces one only while unchanged', async () => {
    const plain = await instances.insert(newInstance());
    const withAgent = await instances.insert(newInstance());
    await instances.update(withAgent.id, { agent_token_encrypted: 'agent-secret' });
    const secrets = (await instances.secrets()).filter((s) =>
      [plain.id, withAgent.id].includes(s.id),
    );
    expect(secrets).toHaveLength(3);
    expect(secrets).toEqual(
      expect.arrayContaining([
        { id: plain.id, column: 'access_token_encrypted', value: plain.access_token_encrypted },
        {
          id: withAgent.id,
          column: 'access_token_encrypted',
          value: withAgent.access_token_encrypted,
        },
        { id: withAgent.id, column: 'agent_token_encrypted', value: 'agent-secret' },
      ]),
    );
    const read = {
      id: withAgent.id,
      column: 'agent_token_encrypted' as const,
      value: 'agent-secret',
    };
    expect(await instances.replaceSecret(read, 'rewritten')).toBe(true);
    expect(await instances.replaceSecret(read, 'again')).toBe(false);
    expect((await instances.findById(withAgent.id))!.agent_token_encrypted).toBe('rewritten');
    expect((await instances.findById(withAgent.id))!.access_token_encrypted).toBe(
      withAgent.access_token_encrypted,
    );
  });
});

describe('ApiKeyStore', () => {
  it('inserts, lists, finds by hash and touches a key', async () => {
    const instanceId = await insertInstance(context.db);
    const key = await apiKeys.insert({
      name: 'orders',
      instance_id: instanceId,
      key_hash: hash(),
      prefix: 'mc_abcd',
    });
    expect(key).toMatchObject({
      name: 'orders',
      instance_id: instanceId,
      prefix: 'mc_abcd',
      created_at: expect.any(Date),
      last_used_at: null,
    });
    const global = await apiKeys.insert({
      name: 'all',
      instance_id: null,
      key_hash: hash(),
      prefix: 'mc_efgh',
    });
    const listed = (await apiKeys.list()).map((k) => k.id);
    expect(listed.indexOf(global.id)).toBeGreaterThan(listed.indexOf(key.id));
    expect(listed.indexOf(key.id)).toBeGreaterThanOrEqual(0);

    expect(await apiKeys.findByHash(key.key_hash)).toEqual({
      id: key.id,
      instance_id: instanceId,
      key_hash: key.key_hash,
    });
    expect(await apiKeys.findByHash(hash())).toBeNull();

    const at = new Date('2026-06-01T12:00:00.123Z');
    await apiKeys.touch(key.id, at);
    const [touched] = (await apiKeys.list()).filter((k) => k.id === key.id);
    expect(touched.last_used_at).toEqual(at);
  });

  it('refuses a second key with the same hash', async () => {
    const keyHash = hash();
    await apiKeys.insert({ name: 'a', instance_id: null, key_hash: keyHash, prefix: 'mc_a' });
    const again = apiKeys.insert({
      name: 'b',
      instance_id: null,
      key_hash: keyHash,
      prefix: 'mc_b',
    });
    expect(sqlState(await again.catch((error: unknown) => error))).toBe(UNIQUE_VIOLATION);
  });

  it('deletes a key, answering its hash, then null', async () => {
    const key = await apiKeys.insert({
      name: 'gone',
      instance_id: null,
      key_hash: hash(),
      prefix: 'mc_gone',
    });
    expect(await apiKeys.delete(key.id)).toBe(key.key_hash);
    expect(await apiKeys.findByHash(key.key_hash)).toBeNull();
    expect(await apiKeys.delete(key.id)).toBeNull();
  });
});

describe('TemplateStore', () => {
  const event = (fields: Partial<TemplateEvent> = {}): TemplateEvent => ({
    channelAccountId: 'acct-templates',
    templateId: randomUUID(),
    templateName: 'order_update',
    templateLanguage: 'pt_BR',
    event: 'APPROVED',
    reason: null,
    at: new Date('2026-06-01T12:00:00.000Z'),
    ...fields,
  });

  const stored = async (templateId: string) => {
    const history = await context.db.query<{ event: string }>(
      `SELECT event FROM template_events WHERE template_id = $1 ORDER BY event_at, event`,
      [templateId],
    );
    const [latest] = await context.db.query<{
      template_name: string | null;
      template_language: string | null;
      status: string;
      reason: string | null;
      status_at: Date;
    }>(
      `SELECT template_name, template_language, status, reason, status_at FROM templates
       WHERE template_id = $1`,
      [templateId],
    );
    return { history: history.map((row) => row.event), latest };
  };

  it('keeps each event once and moves the template’s status forward, never back', async () => {
    const approved = event();
    await templates.record(approved);
    await templates.record(approved);
    expect(await stored(approved.templateId)).toEqual({
      history: ['APPROVED'],
      latest: {
        template_name: 'order_update',
        template_language: 'pt_BR',
        status: 'APPROVED',
        reason: null,
        status_at: approved.at,
      },
    });

    const paused = event({
      templateId: approved.templateId,
      templateName: null,
      templateLanguage: null,
      event: 'PAUSED',
      reason: 'low quality',
      at: new Date('2026-06-02T12:00:00.000Z'),
    });
    await templates.record(paused);
    // An event from before the latest is kept, but the status stays.
    await templates.record(
      event({
        templateId: approved.templateId,
        event: 'PENDING',
        at: new Date('2026-05-31T12:00:00.000Z'),
      }),
    );
    expect(await stored(approved.templateId)).toEqual({
      history: ['PENDING', 'APPROVED', 'PAUSED'],
      latest: {
        template_name: 'order_update',
        template_language: 'pt_BR',
        status: 'PAUSED',
        reason: 'low quality',
        status_at: paused.at,
      },
    });
  });
});

describe('TemplateStore catalogue', () => {
  const synced = (id: string, fields: Partial<SyncedTemplate> = {}): SyncedTemplate => ({
    id,
    name: 'order_update',
    language: 'pt_BR',
    status: 'APPROVED',
    category: 'UTILITY',
    components: [{ type: 'BODY', text: 'Hi {{1}}' }],
    parameterFormat: 'positional',
    quality: 'GREEN',
    reason: null,
    previousCategory: null,
    ...fields,
  });

  it('saveSynced and removeUnlisted: a sync writes the list; a later webhook status stays; what it did not list goes', async () => {
    const account = `acct-${randomUUID()}`;
    const [kept, webhookNewer, gone, heardSince] = [1, 2, 3, 4].map(() => randomUUID());
    const first = new Date('2026-06-01T12:00:00.000Z');
    await templates.saveSynced(account, [synced(kept), synced(webhookNewer), synced(gone)], first);
    // A webhook in the same second as the next read, or later, wins over what that read lists.
    const second = new Date('2026-06-02T12:00:00.400Z');
    await templates.record({
      channelAccountId: account,
      templateId: webhookNewer,
      templateName: 'order_update',
      templateLanguage: 'pt_BR',
      event: 'PAUSED',
      reason: null,
      at: new Date('2026-06-02T12:00:00.000Z'),
    });
    await templates.record({
      channelAccountId: account,
      templateId: heardSince,
      templateName: 'new_one',
      templateLanguage: 'en_US',
      event: 'APPROVED',
      reason: null,
      at: new Date('2026-06-02T12:00:05.000Z'),
    });
    await templates.saveSynced(
      account,
      [synced(kept, { status: 'REJECTED', quality: null }), synced(webhookNewer)],
      second,
    );
    expect(await templates.removeUnlisted(account, second)).toBe(1);
    const left = await templates.list(account, {}, null, 10);
    expect(
      left.map((t) => ({ id: t.id, status: t.status, quality: t.quality, synced: t.syncedAt })),
    ).toEqual(
      expect.arrayContaining([
        { id: kept, status: 'REJECTED', quality: 'GREEN', synced: second },
        { id: webhookNewer, status: 'PAUSED', quality: 'GREEN', synced: second },
        { id: heardSince, status: 'APPROVED', quality: null, synced: null },
      ]),
    );
    expect(left).toHaveLength(3);
    expect(await templates.get(account, gone)).toBeNull();
  });

  it('list, get, byName and removeByName: a page by name with filters; one account only', async () => {
    const account = `acct-${randomUUID()}`;
    const at = new Date('2026-06-01T12:00:00.000Z');
    await templates.saveSynced(
      account,
      [
        synced('t-a-pt', { name: 'alpha' }),
        synced('t-a-en', { name: 'alpha', language: 'en_US' }),
        synced('t-b', { name: 'beta', status: 'PAUSED', category: 'MARKETING' }),
        synced('t-c', { name: 'gamma' }),
      ],
      at,
    );
    await templates.saveSynced(`acct-${randomUUID()}`, [synced('t-other', { name: 'alpha' })], at);
    const page = await templates.list(account, {}, null, 2);
    expect(page.map((t) => t.id)).toEqual(['t-a-en', 't-a-pt']);
    const next = await templates.list(account, {}, { name: 'alpha', id: 't-a-pt' }, 10);
    expect(next.map((t) => t.id)).toEqual(['t-b', 't-c']);
    expect(
      (await templates.list(account, { namePrefix: 'al', language: 'en_US' }, null, 10)).map(
        (t) => t.id,
      ),
    ).toEqual(['t-a-en']);
    expect(
      (await templates.list(account, { status: 'PAUSED', category: 'MARKETING' }, null, 10)).map(
        (t) => t.id,
      ),
    ).toEqual(['t-b']);
    expect((await templates.get(account, 't-b'))?.components).toEqual([
      { type: 'BODY', text: 'Hi {{1}}' },
    ]);
    expect(await templates.get(account, 't-other')).toBeNull();
    expect((await templates.byName(account, 'alpha')).map((t) => t.language)).toEqual([
      'en_US',
      'pt_BR',
    ]);
    expect(await templates.removeByName(account, 'alpha', 'en_US')).toEqual(['t-a-en']);
    expect(await templates.removeByName(account, 'alpha', null)).toEqual(['t-a-pt']);
    expect(await templates.byName(`acct-none`, 'alpha')).toEqual([]);
  });

  it('record: a quality change and an announced, then made, category change move the template', async () => {
    const account = `acct-${randomUUID()}`;
    await templates.saveSynced(account, [synced('t-q')], new Date('2026-06-01T12:00:00Z'));
    const base = {
      channelAccountId: account,
      templateId: 't-q',
      templateName: 'order_update',
      templateLanguage: 'pt_BR',
      reason: null,
    };
    await templates.record({
      ...base,
      change: 'quality',
      event: 'RED',
      quality: 'RED',
      at: new Date('2026-06-02T00:00:00Z'),
    });
    await templates.record({
      ...base,
      change: 'category',
      event: 'ANNOUNCED_MARKETING',
      category: 'MARKETING',
      announced: true,
      at: new Date('2026-06-02T00:00:01Z'),
    });
    let template = await templates.get(account, 't-q');
    expect([template?.quality, template?.category, template?.pendingCategory]).toEqual([
      'RED',
      'UTILITY',
      'MARKETING',
    ]);
    await templates.record({
      ...base,
      change: 'category',
      event: 'MARKETING',
      category: 'MARKETING',
      previousCategory: 'UTILITY',
      at: new Date('2026-06-03T00:00:00Z'),
    });
    template = await templates.get(account, 't-q');
    expect([
      template?.status,
      template?.category,
      template?.previousCategory,
      template?.pendingCategory,
    ]).toEqual(['APPROVED', 'MARKETING', 'UTILITY', null]);
  });
});

describe('mc_instance_status', () => {
  it('reports an instance created active as activated, and inactive as deactivated', async () => {
    const active = await instances.insert(newInstance());
    const inactive = await instances.insert(newInstance({ is_active: false }));
    expect(await statusEvents(active.id)).toEqual([
      {
        lane: `instance:${active.id}`,
        data: {
          status: 'activated',
          name: 'Loja',
          phone_number_id: active.phone_number_id,
          display_phone_number: '+55 11 99999-0000',
          is_active: true,
          token_rejected_at: null,
        },
      },
    ]);
    expect((await statusEvents(inactive.id)).map((e) => e.data.status)).toEqual(['deactivated']);
  });

  it('reports deactivation, activation and a rejected token, and nothing for other changes', async () => {
    const created = await instances.insert(newInstance());
    await instances.update(created.id, { name: 'Renamed', display_phone_number: '+1' });
    await instances.update(created.id, { is_active: true });
    await instances.update(created.id, { is_active: false });
    await instances.update(created.id, { is_active: true });
    await instances.markTokenRejected(created.id);
    await instances.markTokenRejected(created.id);
    const rejectedAt = (await instances.findById(created.id))!.token_rejected_at!;
    await instances.update(created.id, { status: 'disconnected' });

    const found = await statusEvents(created.id);
    expect(found.map((e) => e.data.status)).toEqual([
      'activated',
      'deactivated',
      'activated',
      'token_rejected',
    ]);
    expect(found[3].data).toMatchObject({
      name: 'Renamed',
      is_active: true,
      token_rejected_at: rejectedAt.toISOString(),
    });
  });
});

describe('mc_template_event_added', () => {
  it('writes one template.status per active instance of the account', async () => {
    const account = `acct-${randomUUID()}`;
    const first = await instances.insert(newInstance({ channel_account_id: account }));
    const second = await instances.insert(newInstance({ channel_account_id: account }));
    const inactive = await instances.insert(
      newInstance({ channel_account_id: account, is_active: false }),
    );
    const elsewhere = await instances.insert(newInstance());
    const templateId = randomUUID();
    await templates.record({
      channelAccountId: account,
      templateId,
      templateName: 'order_update',
      templateLanguage: 'pt_BR',
      event: 'REJECTED',
      reason: 'INVALID_FORMAT',
      at: new Date('2026-06-01T12:00:00.000Z'),
    });

    const found = await context.db.query<{ instance_id: string; lane: string; data: unknown }>(
      `SELECT instance_id, lane, data FROM events WHERE type = 'template.status'
         AND instance_id = ANY($1::uuid[]) ORDER BY instance_id`,
      [[first.id, second.id, inactive.id, elsewhere.id]],
    );
    expect(found).toEqual(
      [first.id, second.id].sort().map((instanceId) => ({
        instance_id: instanceId,
        lane: `template:${templateId}`,
        data: {
          template_id: templateId,
          name: 'order_update',
          language: 'pt_BR',
          change: 'status',
          status: 'REJECTED',
          reason: 'INVALID_FORMAT',
          quality: null,
          category: null,
          previous_category: null,
          channel_account_id: account,
          at: '2026-06-01T12:00:00.000Z',
        },
      })),
    );
  });

  it("tells a quality or category change with the template's current status", async () => {
    const account = `acct-${randomUUID()}`;
    const instance = await instances.insert(newInstance({ channel_account_id: account }));
    const templateId = randomUUID();
    const base = {
      channelAccountId: account,
      templateId,
      templateName: 'order_update',
      templateLanguage: 'pt_BR',
      reason: null,
    };
    await templates.record({ ...base, event: 'PAUSED', at: new Date('2026-06-01T12:00:00Z') });
    await templates.record({
      ...base,
      change: 'quality',
      event: 'RED',
      quality: 'RED',
      at: new Date('2026-06-01T12:00:01Z'),
    });
    await templates.record({
      ...base,
      change: 'category',
      event: 'MARKETING',
      category: 'MARKETING',
      previousCategory: 'UTILITY',
      at: new Date('2026-06-01T12:00:02Z'),
    });
    const found = await context.db.query<{ data: Record<string, unknown> }>(
      `SELECT data FROM events WHERE type = 'template.status' AND instance_id = $1 ORDER BY data->>'at'`,
      [instance.id],
    );
    expect(found.map((row) => row.data)).toEqual([
      expect.objectContaining({ change: 'status', status: 'PAUSED', quality: null }),
      expect.objectContaining({ change: 'quality', status: 'PAUSED', quality: 'RED' }),
      expect.objectContaining({
        change: 'category',
        status: 'PAUSED',
        category: 'MARKETING',
        previous_category: 'UTILITY',
      }),
    ]);
  });

  it('writes nothing when no subscription wants template.status', async () => {
    await context.db.query(
      `UPDATE event_subscriptions SET event_types = array_remove(event_types, 'template.status')`,
    );
    try {
      const account = `acct-${randomUUID()}`;
      const instance = await instances.insert(newInstance({ channel_account_id: account }));
      await templates.record({
        channelAccountId: account,
        templateId: randomUUID(),
        templateName: null,
        templateLanguage: null,
        event: 'APPROVED',
        reason: null,
        at: new Date(),
      });
      const found = await context.db.query(
        `SELECT 1 FROM events WHERE type = 'template.status' AND instance_id = $1`,
        [instance.id],
      );
      expect(found).toEqual([]);
    } finally {
      await context.db.query(
        `UPDATE event_subscriptions SET event_types = event_types || '{template.status}'::text[]
         WHERE instance_id IS NULL`,
      );
    }
  });
});
