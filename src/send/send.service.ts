import { Injectable, Logger } from '@nestjs/common';
import type { PersonRef } from '../accounts/account.types.js';
import { numberRate, type Instance } from '../instances/instance.types.js';
import { InstancesService } from '../instances/instances.service.js';
import {
  MessagesService,
  addressOf,
  recipientOf,
  type Recipient,
} from '../messages/messages.service.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { TemplatesService } from '../templates/templates.service.js';
import { buildPlatformMessage, readdressed } from './outbound-message.builder.js';
import type { SendKind, SendRequests } from './send-kinds.js';
import { OutboundRecordQueue } from './outbound-records.js';
import { SendPacer } from './send-pacer.js';

/** What the agent's reply path knows already, and /send does not. */
export interface ReplyContext {
  /**
   * The contact replied to, read right before each attempt goes out (after
   * any wait for pacing): its id for the record, and how to reach it now. It
   * just wrote (its window is open) and its turn just wrote to the store, so
   * neither is asked again. Throws ReplyWithheld when the agent must not send.
   */
  target(): Promise<{ contactId: string; recipient: Recipient }>;
}

/**
 * Who sends, beside a client's API key (none given): the agent answering a
 * turn, or a person who logged in (recorded as theirs, `sent_by: person`).
 */
export type Sender = { reply: ReplyContext } | { person: PersonRef };

/** A reply part not sent: a person has the contact, it opted out, or it is gone. */
export class ReplyWithheld extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** The one path every outbound message takes: /send/*, and the agent's answers. */
@Injectable()
export class SendService {
  private readonly logger = new Logger(SendService.name);

  constructor(
    private readonly instances: InstancesService,
    private readonly messages: MessagesService,
    private readonly pacer: SendPacer,
    private readonly metrics: MetricsService,
    private readonly parked: OutboundRecordQueue,
    private readonly templates: TemplatesService,
  ) {}

  /** Sends one message as the instance; returns its wamid. */
  async send<K extends SendKind>(
    instance: Instance,
    kind: K,
    request: SendRequests[K],
    sender?: Sender,
  ): Promise<string> {
    const reply = sender && 'reply' in sender ? sender.reply : undefined;
    const person = sender && 'person' in sender ? sender.person : null;
    const asked = recipientOf(request);
    let recipient = asked;
    const template = kind === 'template' ? (request as SendRequests['template']) : null;
    // A template the catalogue knows is checked here, not found wrong by the platform later.
    if (template) {
      const known = await this.templates.checkSend(instance, template);
      if (known?.category === 'MARKETING' && !reply) {
        await this.messages.assertMarketingAllowed(instance.id, recipient);
      }
    }
    if (!reply) {
      if (kind !== 'template') await this.messages.assertWindowOpen(instance.id, recipient);
      // Nothing goes out that could not be recorded: with the store away, 503 and no send.
      await this.messages.assertReachable();
      // A person answers (any send not made by the agent): the agent steps back first.
      await this.messages.pauseForPerson(instance.id, recipient, person);
    }
    const message = buildPlatformMessage(kind, request);
    let contactId: string | undefined;
    // Whom it goes to, read again where it may have changed: the customer's
    // number or user id (or, for a reply, a person taking over) while the send
    // waited for its turn, and before each retry.
    const current = async () => {
      if (reply) {
        ({ contactId, recipient } = await reply.target());
      } else {
        recipient = await this.messages.currentRecipient(instance.id, recipient);
      }
      return readdressed(message, recipient);
    };
    const session = this.instances.session(instance);
    const wamid = await this.pacer
      .run(
        instance.phone_number_id,
        addressOf(asked),
        // A client's send read its address a moment ago: only a wait makes it worth reading again.
        async (waited) => session.sendMessage(reply || waited ? await current() : message, current),
        numberRate(instance, this.pacer.defaultRate),
      )
      .catch((error: unknown) => {
        throw template ? this.templates.explainSendError(instance, template, error) : error;
      });
    if (!reply) {
      // The person's pause follows the moment the message went out, not the
      // moment it was asked for (pacing and retries come between); within the
      // slack this writes nothing.
      await this.messages.pauseForPerson(instance.id, recipient, person).catch((error: unknown) => {
        this.logger.warn(
          { instanceId: instance.id, wamid, err: (error as Error).message },
          'the pause after a sent message could not be extended',
        );
      });
    }
    this.metrics.sends.inc({ type: kind });
    // The request as the client sent it, less the routing field, to whom it went.
    const body = JSON.parse(JSON.stringify(request)) as Record<string, unknown>;
    delete body.instance_id;
    if (addressOf(recipient) !== addressOf(asked)) {
      delete body.to;
      delete body.recipient;
      Object.assign(body, recipient);
    }
    const record = {
      instanceId: instance.id,
      recipient,
      contactId,
      sentBy: reply ? ('agent' as const) : person ? ('person' as const) : ('api' as const),
      person,
      type: kind,
      body,
      wamid,
    };
    try {
      await this.messages.recordOutbound(record);
    } catch (error) {
      // The message went out: answering an error would invite a duplicate resend.
      // The record waits in Redis until PostgreSQL takes it.
      await this.parked.park(record).catch((parkError: unknown) => {
        this.logger.error(
          { instanceId: instance.id, wamid, err: (parkError as Error).message },
          'a sent message could not be recorded anywhere',
        );
      });
      this.logger.warn(
        { instanceId: instance.id, wamid, err: (error as Error).message },
        'sent message recorded later: the database is away',
      );
    }
    return wamid;
  }
}
