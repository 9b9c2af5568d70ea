import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppException } from '../common/app.exception.js';
import { AppConfig } from '../config/app-config.js';
import { Contact } from './entities/contact.entity.js';
import { Message } from './entities/message.entity.js';

export const SERVICE_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface OutboundRecord {
  instanceId: string;
  contact: string;
  type: string;
  body: Record<string, unknown>;
  wamid: string;
}

/** The message store and each contact's service window. */
@Injectable()
export class MessagesService {
  constructor(
    @InjectRepository(Message) private readonly messages: Repository<Message>,
    @InjectRepository(Contact) private readonly contacts: Repository<Contact>,
    private readonly config: AppConfig,
  ) {}

  /**
   * Refuses a non-template send when the contact has not written in the last
   * 24 hours (422 service_window_closed), unless SERVICE_WINDOW_ENFORCE=false.
   */
  async assertWindowOpen(instanceId: string, waId: string, now = Date.now()): Promise<void> {
    if (!this.config.SERVICE_WINDOW_ENFORCE) return;
    const contact = await this.contacts.findOne({
      where: { instance_id: instanceId, wa_id: waId },
      select: { last_inbound_at: true },
    });
    const last = contact?.last_inbound_at?.getTime();
    if (last === undefined || now - last > SERVICE_WINDOW_MS) {
      throw new AppException(
        'service_window_closed',
        `${waId} has not written in the last 24 hours: only a template (POST /send/template) can be sent`,
      );
    }
  }

  /**
   * Stores an accepted send. A status may have arrived first (webhooks race
   * the send's answer): then the placeholder row is completed, its status kept.
   */
  async recordOutbound(record: OutboundRecord): Promise<void> {
    await this.messages
      .createQueryBuilder()
      .insert()
      .into(Message)
      .values({
        instance_id: record.instanceId,
        wamid: record.wamid,
        direction: 'outbound',
        contact: record.contact,
        type: record.type,
        body: () => ':body',
        status: 'sent',
      })
      .setParameter('body', JSON.stringify(record.body))
      .orUpdate(['instance_id', 'direction', 'contact', 'type', 'body'], ['wamid'])
      .execute();
  }

  async findForInstance(instanceId: string, wamid: string): Promise<Message> {
    const message = await this.messages.findOneBy({ instance_id: instanceId, wamid });
    if (!message) throw new AppException('message_not_found', `Message ${wamid} not found`);
    return message;
  }
}
