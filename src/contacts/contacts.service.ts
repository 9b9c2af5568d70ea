import { Injectable } from '@nestjs/common';
import { ContactBuffer } from '../turns/buffer/contact-buffer.js';
import { AppException } from '../common/app.exception.js';
import { decodeCursor, encodeCursor } from '../common/time-id-cursor.js';
import { AppConfig } from '../config/app-config.js';
import type { Instance } from '../instances/instance.types.js';
import { MessageStore } from '../messages/message.store.js';
import type { Contact, HandoffBy } from '../messages/message.types.js';
import { MessagesService } from '../messages/messages.service.js';
import {
  arrivalPosition,
  decodeAfter,
  decodeBefore,
  followCursor,
  storedPosition,
} from './conversation-cursors.js';
import {
  ContactDto,
  ConversationMessageDto,
  type ContactPageDto,
  type ConversationPageDto,
  type ConversationQueryDto,
  type EndHandoffDto,
  type ListContactsQueryDto,
  type StartHandoffDto,
} from './dto/contact.dto.js';

const CONTACT_PAGE = 20;
const CONVERSATION_PAGE = 50;

/** Conversations, handoffs and opt-outs of an instance's contacts. */
@Injectable()
export class ContactsService {
  constructor(
    private readonly store: MessageStore,
    private readonly messages: MessagesService,
    private readonly config: AppConfig,
    private readonly buffer: ContactBuffer,
  ) {}

  async list(instance: Instance, query: ListContactsQueryDto): Promise<ContactPageDto> {
    const limit = query.limit ?? CONTACT_PAGE;
    const after = query.cursor === undefined ? null : decodeCursor(query.cursor);
    const page = await this.store.listContacts(
      instance.id,
      query.q?.trim() || undefined,
      after,
      limit + 1,
    );
    const data = page.slice(0, limit);
    const last = data.at(-1);
    return {
      data: data.map((contact) => ContactDto.from(contact)),
      next_cursor:
        page.length > limit && last ? encodeCursor({ atMicros: last.activity, id: last.id }) : null,
    };
  }

  /**
   * A page of a conversation. Listing (the latest, or `before`) reads in
   * arrival order; following (`after`) reads what was stored since, in the
   * order it was stored, so a message stored late is never passed over
   * (shown in arrival order among the page's own). `newer` is a stored
   * position below every transaction of the database still in flight.
   */
  async conversation(
    instance: Instance,
    key: string,
    query: ConversationQueryDto,
  ): Promise<ConversationPageDto> {
    if (query.before !== undefined && query.after !== undefined) {
      throw AppException.validation([{ field: 'after', message: 'cannot be used with before' }]);
    }
    const before = query.before === undefined ? null : decodeBefore(query.before);
    const after = query.after === undefined ? null : decodeAfter(query.after);
    const contact = await this.find(instance, key);
    const limit = query.limit ?? CONVERSATION_PAGE;
    if (after) {
      const { messages } = await this.store.follow(contact.id, after, limit);
      const last = messages.at(-1);
      const data = messages.map((message) => ConversationMessageDto.from(message));
      data.sort((x, y) => (x.position < y.position ? -1 : 1));
      return {
        contact: ContactDto.from(contact),
        data,
        older: data[0]?.position ?? null,
        newer: last ? followCursor(storedPosition(last)) : query.after!,
      };
    }
    const from =
      before && 'earlierSeq' in before
        ? await this.store.arrivalOfSeq(contact.id, before.earlierSeq)
        : before;
    if (before && !from) {
      // An earlier version's cursor naming no message of this contact.
      throw AppException.validation([{ field: 'before', message: 'must be a cursor from older' }]);
    }
    const { messages, horizon } = await this.store.conversation(contact.id, from, limit + 1);
    // One row more than asked says whether there are older ones.
    const data = messages.slice(0, limit).reverse();
    return {
      contact: ContactDto.from(contact),
      data: data.map((message) => ConversationMessageDto.from(message)),
      older: messages.length > limit && data[0] ? arrivalPosition(data[0]) : null,
      // Below the horizon nothing more can be stored; following takes the rest (it may repeat
      // a message shown here that was stored while an earlier transaction was still open).
      newer: followCursor({ tx: horizon, seq: 0n }),
    };
  }

  async startHandoff(
    instance: Instance,
    key: string,
    dto: StartHandoffDto,
    by: HandoffBy,
  ): Promise<ContactDto> {
    const contact = await this.find(instance, key);
    const until = dto.until
      ? new Date(dto.until)
      : new Date(Date.now() + this.config.HANDOFF_DEFAULT_S * 1000);
    if (until.getTime() <= Date.now()) {
      throw AppException.validation([{ field: 'until', message: 'must be in the future' }]);
    }
    const paused = await this.store.startHandoff(contact.id, until, dto.reason ?? null, by);
    if (!paused) throw notFound(key);
    return ContactDto.from(paused);
  }

  async endHandoff(
    instance: Instance,
    key: string,
    dto: EndHandoffDto,
    by: HandoffBy,
  ): Promise<ContactDto> {
    const contact = await this.find(instance, key);
    const { contact: resumed, pending } = await this.store.endHandoff(
      contact.id,
      by,
      dto.include_pending ?? false,
      [...this.config.OPT_OUT_WORDS, ...this.config.OPT_IN_WORDS].map((w) =>
        w.trim().toUpperCase(),
      ),
    );
    if (!resumed) throw notFound(key);
    // The messages of the pause wait for a turn again: their flush is armed now.
    if (pending > 0) await this.buffer.schedule(instance.id, contact.id);
    return ContactDto.from(resumed);
  }

  /** Lifts an opt-out (an admin's call: the contact asked another way). */
  async optIn(instance: Instance, key: string): Promise<ContactDto> {
    const contact = await this.find(instance, key);
    const changed = await this.store.setOptOut([contact.id], false);
    await this.messages.optOutChanged(changed);
    return ContactDto.from((await this.store.contactByKey(instance.id, key)) ?? contact);
  }

  private async find(instance: Instance, key: string): Promise<Contact> {
    const contact = await this.store.contactByKey(instance.id, key);
    if (!contact) throw notFound(key);
    return contact;
  }
}

function notFound(key: string): AppException {
  return new AppException('contact_not_found', `Contact ${key} not found`);
}
