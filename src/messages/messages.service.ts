import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppException } from '../common/app.exception.js';
import { BatchWriter } from '../common/batch-writer.js';
import { LocalCache } from '../common/local-cache.js';
import { AppConfig } from '../config/app-config.js';
import { Contact } from './entities/contact.entity.js';
import { Message } from './entities/message.entity.js';

export const SERVICE_WINDOW_MS = 24 * 60 * 60 * 1000;
const WINDOW_CACHE_TTL_MS = 60_000;

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
  private readonly openUntil = new LocalCache<number>(WINDOW_CACHE_TTL_MS, 100_000);
  private readonly writer: BatchWriter<OutboundRecord>;

  constructor(
    @InjectRepository(Message) private readonly messages: Repository<Message>,
    @InjectRepository(Contact) private readonly contacts: Repository<Contact>,
    private readonly config: AppConfig,
  ) {
    this.writer = new BatchWriter((records) => this.insertOutbound(records));
  }

  /**
   * Refuses a non-template send when the contact has not written in the last
   * 24 hours (422 service_window_closed), unless SERVICE_WINDOW_ENFORCE=false.
   */
  async assertWindowOpen(instanceId: string, waId: string, now = Date.now()): Promise<void> {
    if (!this.config.SERVICE_WINDOW_ENFORCE) return;
    // A window only ever moves later (a new inbound message extends it), so a
    // known "open until" stays true without invalidation; closed ones are re-read.
    const key = `${instanceId}:${waId}`;
    if ((this.openUntil.get(key, now) ?? 0) > now) return;
    const [contact] = await this.contacts.query<Array<Pick<Contact, 'last_inbound_at'>>>(
      'SELECT last_inbound_at FROM contacts WHERE instance_id = $1 AND wa_id = $2',
      [instanceId, waId],
    );
    const last = contact?.last_inbound_at?.getTime();
    if (last !== undefined && now - last <= SERVICE_WINDOW_MS) {
      this.openUntil.set(key, last + SERVICE_WINDOW_MS, now);
      return;
    }
    throw new AppException(
      'service_window_closed',
      `${waId} has not written in the last 24 hours: only a template (POST /send/template) can be sent`,
    );
  }

  /**
   * Stores an accepted send. A status may have arrived first (webhooks race
   * the send's answer): then the placeholder row is completed, its status kept.
   */
  recordOutbound(record: OutboundRecord): Promise<void> {
    return this.writer.write(record);
  }

  /** One INSERT for every send that finished in the same tick. */
  private async insertOutbound(records: OutboundRecord[]): Promise<void> {
    const params: unknown[] = [];
    const rows = records.map((record) => {
      const base = params.length;
      params.push(
        record.instanceId,
        record.wamid,
        record.contact,
        record.type,
        JSON.stringify(record.body),
      );
      return `($${base + 1}, $${base + 2}, 'outbound', $${base + 3}, $${base + 4}, $${base + 5}, 'sent')`;
    });
    await this.messages.query(
      `INSERT INTO messages (instance_id, wamid, direction, contact, type, body, status)
       VALUES ${rows.join(', ')}
       ON CONFLICT (wamid) DO UPDATE SET
         instance_id = EXCLUDED.instance_id, direction = EXCLUDED.direction,
         contact = EXCLUDED.contact, type = EXCLUDED.type, body = EXCLUDED.body,
         updated_at = now()`,
      params,
    );
  }

  async findForInstance(instanceId: string, wamid: string): Promise<Message> {
    const message = await this.messages.findOneBy({ instance_id: instanceId, wamid });
    if (!message) throw new AppException('message_not_found', `Message ${wamid} not found`);
    return message;
  }
}
