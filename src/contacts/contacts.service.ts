import { Injectable } from '@nestjs/common';
import { AppException } from '../common/app.exception.js';
import { decodeCursor, encodeCursor } from '../common/time-id-cursor.js';
import { AppConfig } from '../config/app-config.js';
import type { Instance } from '../instances/instance.types.js';
import { ContactFlush } from './contact-flush.js';
import { ContactSummaries } from './contact-summaries.js';
import { ContactStore } from './contact.store.js';
import type { PersonRef } from '../accounts/account.types.js';
import type { Contact, HandoffBy } from './contact.types.js';
import {
  ContactDto,
  ContactListItemDto,
  type ContactPageDto,
  type EndHandoffDto,
  type ListContactsQueryDto,
  type StartHandoffDto,
} from './dto/contact.dto.js';
import { OptOuts } from './opt-outs.js';

const CONTACT_PAGE = 20;

/** The list, handoffs and opt-outs of an instance's contacts. */
@Injectable()
export class ContactsService {
  constructor(
    private readonly store: ContactStore,
    private readonly optOuts: OptOuts,
    private readonly config: AppConfig,
    private readonly flush: ContactFlush,
    private readonly summaries: ContactSummaries,
  ) {}

  /** A person read the conversation up to `wamid`: the messages stored until then are no longer unread. */
  async markRead(instance: Instance, key: string, wamid: string): Promise<ContactListItemDto> {
    const contact = await this.store.contactByKey(instance.id, key);
    if (!contact) throw contactNotFound(key);
    const read = await this.store.markRead(contact.id, wamid);
    if (!read) {
      throw new AppException('message_not_found', `Message ${wamid} is not in this conversation`);
    }
    const summaries = await this.summaries.contactSummaries([read.id]);
    return ContactListItemDto.withSummary(read, summaries.get(read.id));
  }

  async list(instance: Instance, query: ListContactsQueryDto): Promise<ContactPageDto> {
    const limit = query.limit ?? CONTACT_PAGE;
    const after = query.cursor === undefined ? null : decodeCursor(query.cursor);
    const page = await this.store.listContacts(
      instance.id,
      query.q?.trim() || undefined,
      after,
      limit + 1,
      query.state,
    );
    const data = page.slice(0, limit);
    const last = data.at(-1);
    const summaries = await this.summaries.contactSummaries(data.map((c) => c.id));
    return {
      data: data.map((contact) =>
        ContactListItemDto.withSummary(contact, summaries.get(contact.id)),
      ),
      next_cursor:
        page.length > limit && last ? encodeCursor({ atMicros: last.activity, id: last.id }) : null,
    };
  }

  async startHandoff(
    instance: Instance,
    key: string,
    dto: StartHandoffDto,
    by: HandoffBy,
    person: PersonRef | null = null,
  ): Promise<ContactDto> {
    const contact = await this.find(instance, key);
    const until = dto.until
      ? new Date(dto.until)
      : new Date(Date.now() + this.config.HANDOFF_DEFAULT_S * 1000);
    if (until.getTime() <= Date.now()) {
      throw AppException.validation([{ field: 'until', message: 'must be in the future' }]);
    }
    const paused = await this.store.startHandoff(contact.id, until, dto.reason ?? null, by, person);
    if (!paused) throw contactNotFound(key);
    return ContactDto.from(paused);
  }

  async endHandoff(
    instance: Instance,
    key: string,
    dto: EndHandoffDto,
    by: HandoffBy,
    person: PersonRef | null = null,
  ): Promise<ContactDto> {
    const contact = await this.find(instance, key);
    const { contact: resumed, pending } = await this.store.endHandoff(
      contact.id,
      by,
      dto.include_pending ?? false,
      this.config.notForTheAgent,
      person,
    );
    if (!resumed) throw contactNotFound(key);
    // The messages of the pause wait for a turn again: their flush is armed now.
    if (pending > 0) await this.flush.schedule(instance.id, contact.id);
    return ContactDto.from(resumed);
  }

  /** Lifts an opt-out (an admin's call: the contact asked another way). */
  async optIn(instance: Instance, key: string): Promise<ContactDto> {
    const contact = await this.find(instance, key);
    await this.optOuts.set([contact.id], false);
    return ContactDto.from((await this.store.contactByKey(instance.id, key)) ?? contact);
  }

  private async find(instance: Instance, key: string): Promise<Contact> {
    const contact = await this.store.contactByKey(instance.id, key);
    if (!contact) throw contactNotFound(key);
    return contact;
  }
}

export function contactNotFound(key: string): AppException {
  return new AppException('contact_not_found', `Contact ${key} not found`);
}
