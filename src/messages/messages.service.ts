import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppException } from '../common/app.exception.js';
import { BatchWriter } from '../common/batch-writer.js';
import { LocalCache } from '../common/local-cache.js';
import { AppConfig } from '../config/app-config.js';
import { rows } from '../database/sql.js';
import type { InboundMessage } from '../platform/webhook-payload.js';
import { Contact } from './entities/contact.entity.js';
import { Message } from './entities/message.entity.js';

export const SERVICE_WINDOW_MS = 24 * 60 * 60 * 1000;
const WINDOW_CACHE_TTL_MS = 60_000;

/** When a contact's waiting messages arrived: the first and the last. */
export interface AwaitingSpan {
  first: Date;
  last: Date;
}

export interface ContactProfile {
  user_id: string | null;
  name: string | null;
}

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

  /** When the contact's messages waiting for a turn arrived; null when none waits. */
  async awaitingSpan(instanceId: string, contact: string): Promise<AwaitingSpan | null> {
    const [span] = await rows<{ first: Date | null; last: Date | null }>(
      this.messages,
      `SELECT min(received_at) AS first, max(received_at) AS last FROM messages
       WHERE awaiting_turn AND instance_id = $1 AND contact = $2`,
      [instanceId, contact],
    );
    return span?.first && span.last ? { first: span.first, last: span.last } : null;
  }

  /**
   * Contacts whose waiting messages should have gone to the agent by now (the
   * quiet delay after the last one, or the max wait after the first, passed
   * more than `graceMs` ago) and that have no open turn to wait for.
   */
  overdueContacts(
    delayMs: number,
    maxWaitMs: number,
    graceMs: number,
    limit = 1000,
  ): Promise<Array<{ instance_id: string; contact: string }>> {
    return rows(
      this.messages,
      `SELECT m.instance_id, m.contact FROM messages m
       WHERE m.awaiting_turn
         AND NOT EXISTS (
           SELECT 1 FROM turns t WHERE t.instance_id = m.instance_id AND t.contact = m.contact
             AND t.status IN ('claimed', 'calling', 'answered', 'sending'))
       GROUP BY m.instance_id, m.contact
       HAVING max(m.received_at) < now() - ($1::float8 + $3::float8) * interval '1 millisecond'
           OR min(m.received_at) < now() - ($2::float8 + $3::float8) * interval '1 millisecond'
       LIMIT $4`,
      [delayMs, maxWaitMs, graceMs, limit],
    );
  }

  /** Seconds since the oldest message still waiting for a turn arrived (0 when none waits). */
  async oldestAwaitingAgeSeconds(): Promise<number> {
    const [oldest] = await rows<{ age: number | null }>(
      this.messages,
      `SELECT extract(epoch FROM now() - min(received_at))::float8 AS age
       FROM messages WHERE awaiting_turn`,
    );
    return Math.max(0, oldest?.age ?? 0);
  }

  /** A turn's messages as the platform sent them: by timestamp, then arrival. */
  async ofTurn(turnId: string): Promise<InboundMessage[]> {
    const found = await rows<{ body: InboundMessage }>(
      this.messages,
      `SELECT body FROM messages WHERE turn_id = $1 ORDER BY created_at, received_at, seq`,
      [turnId],
    );
    return found.map((row) => row.body);
  }

  async contactProfile(instanceId: string, waId: string): Promise<ContactProfile> {
    const [profile] = await rows<ContactProfile>(
      this.contacts,
      'SELECT user_id, name FROM contacts WHERE instance_id = $1 AND wa_id = $2',
      [instanceId, waId],
    );
    return profile ?? { user_id: null, name: null };
  }

  async findForInstance(instanceId: string, wamid: string): Promise<Message> {
    const message = await this.messages.findOneBy({ instance_id: instanceId, wamid });
    if (!message) throw new AppException('message_not_found', `Message ${wamid} not found`);
    return message;
  }
}
