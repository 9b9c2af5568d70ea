import { randomUUID } from 'node:crypto';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { EVENT_BODIES } from '../../src/events/dto/event-payloads.dto.js';
import { EventStore } from '../../src/events/event.store.js';
import { CampaignStore } from '../../src/campaigns/campaign.store.js';
import { HistoryStore } from '../../src/history/history.store.js';
import { ContactStore } from '../../src/contacts/contact.store.js';
import { MessageStore } from '../../src/messages/message.store.js';
import { offlineOpenApiDocument } from '../../src/openapi-offline.js';
import { insertInstance, insertSubscription, useMigratedDatabase } from './support.js';

/**
 * The event contract is written twice: by the triggers (SQL) and by the DTOs
 * the API description is built from. One event of each type, written by the
 * triggers as the changes they report happen, must validate against the
 * description's schema for its type, as the dispatcher sends it.
 */
describe('events the triggers write', () => {
  const context = useMigratedDatabase();

  it('validate, one of each type, against the OpenAPI schemas built from the event DTOs', async () => {
    const messages = new MessageStore(context.source);
    const contactStore = new ContactStore(context.source);
    const events = new EventStore(context.source);
    const subscriptionId = await insertSubscription(context.db, null, Object.keys(EVENT_BODIES));

    // instance.status: the instance is created (active).
    const instanceId = await insertInstance(context.db, { channelAccountId: '4455' });
    // message.received
    const waId = '5511988887777';
    const contacts = await contactStore.resolveContacts(instanceId, [
      {
        key: waId,
        waId,
        userId: 'BR.1234567890',
        parentUserId: null,
        username: '@maria',
        name: 'Maria',
        lastInboundAt: new Date(),
      },
    ]);
    const contactId = contacts.get(waId)!;
    await messages.insertInbound(instanceId, true, [
      {
        wamid: `wamid.in.${randomUUID()}`,
        address: waId,
        contactId,
        type: 'text',
        body: JSON.stringify({ from: waId, type: 'text', text: { body: 'Oi' } }),
        sentAt: new Date(),
        receivedAt: new Date(),
      },
    ]);
    // message.status of a placeholder (the status came first), then message.sent as the send
    // completes it, then message.status of a stored send.
    const wamid = `wamid.out.${randomUUID()}`;
    await messages.applyStatuses(instanceId, [
      { wamid, recipient: waId, status: 'sent', errors: null },
    ]);
    await messages.insertOutbound([
      {
        instanceId,
        address: waId,
        byNumber: true,
        sentBy: 'api',
        type: 'text',
        body: { text: { body: 'Olá' } },
        wamid,
      },
    ]);
    await messages.applyStatuses(instanceId, [
      {
        wamid,
        recipient: waId,
        status: 'failed',
        errors: JSON.stringify([{ code: 131047, title: 'Re-engagement message' }]),
      },
    ]);
    // template.status
    await context.db.query(
      `INSERT INTO template_events (channel_account_id, template_id, template_name,
         template_language, event, reason, event_at)
       VALUES ('4455', '1234', 'order_update', 'pt_BR', 'APPROVED', NULL, now())`,
    );
    // turn.failed
    const turnId = randomUUID();
    await context.db.query(
      `INSERT INTO turns (id, instance_id, contact_id, status) VALUES ($1, $2, $3, 'calling')`,
      [turnId, instanceId, contactId],
    );
    await context.db.query(
      `UPDATE turns SET status = 'failed', attempts = 3, last_error = 'the agent answered 500'
       WHERE id = $1`,
      [turnId],
    );
    // contact.handoff
    await contactStore.startHandoff(contactId, new Date(Date.now() + 3_600_000), 'a person', 'api');
    // campaign.status: created, then completed (with its counts)
    const campaigns = new CampaignStore(context.source);
    const campaign = await campaigns.create(
      {
        instanceId,
        name: 'Autumn sale',
        templateId: '1234',
        templateName: 'order_update',
        templateLanguage: 'pt_BR',
        templateCategory: 'MARKETING',
        components: [],
        startAt: null,
        ratePerS: null,
        duplicates: 1,
        invalid: 0,
      },
      [{ to: waId }],
    );
    await campaigns.transition(campaign.id, ['draft'], 'running');
    await campaigns.transition(campaign.id, ['running'], 'completed');
    // history.imported
    await new HistoryStore(context.source).importChunk(
      instanceId,
      { phase: 0, chunkOrder: 1, progress: 100, messages: 2 },
      () => Promise.resolve(2),
    );
    // ping
    await events.ping((await events.find(subscriptionId))!);

    const sent = await events.claim(randomUUID(), 100, 100, 60);
    const bodies = sent.map((delivery) => JSON.parse(delivery.body) as { type: string });
    expect(new Set(bodies.map((body) => body.type))).toEqual(new Set(Object.keys(EVENT_BODIES)));

    const document = await offlineOpenApiDocument();
    const ajv = new Ajv({ allErrors: true, strict: false });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'api', components: document.components });
    const invalid = bodies.flatMap((body) => {
      const schema = EVENT_BODIES[body.type as keyof typeof EVENT_BODIES].name;
      const validate = ajv.getSchema(`api#/components/schemas/${schema}`)!;
      return validate(body) ? [] : [{ type: body.type, errors: validate.errors, body }];
    });
    expect(invalid).toEqual([]);
  });
});
