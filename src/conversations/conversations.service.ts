import { Injectable } from '@nestjs/common';
import { AppException } from '../common/app.exception.js';
import { ContactStore } from '../contacts/contact.store.js';
import type { Contact } from '../contacts/contact.types.js';
import { contactNotFound } from '../contacts/contacts.service.js';
import { ContactDto } from '../contacts/dto/contact.dto.js';
import type { Instance } from '../instances/instance.types.js';
import { MessageStore } from '../messages/message.store.js';
import {
  arrivalPosition,
  decodeAfter,
  decodeBefore,
  followCursor,
  storedPosition,
} from './conversation-cursors.js';
import {
  ConversationMessageDto,
  type ConversationPageDto,
  type ConversationQueryDto,
} from './dto/conversation.dto.js';

const CONVERSATION_PAGE = 50;

/** A contact's conversation: its messages, both directions, paged and followed. */
@Injectable()
export class ConversationsService {
  constructor(
    private readonly contacts: ContactStore,
    private readonly messages: MessageStore,
  ) {}

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
      const { messages } = await this.messages.follow(contact.id, after, limit);
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
        ? await this.messages.arrivalOfSeq(contact.id, before.earlierSeq)
        : before;
    if (before && !from) {
      // An earlier version's cursor naming no message of this contact.
      throw AppException.validation([{ field: 'before', message: 'must be a cursor from older' }]);
    }
    const { messages, horizon } = await this.messages.conversation(contact.id, from, limit + 1);
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

  private async find(instance: Instance, key: string): Promise<Contact> {
    const contact = await this.contacts.contactByKey(instance.id, key);
    if (!contact) throw contactNotFound(key);
    return contact;
  }
}
