import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { TemplateEvent } from './template.types.js';

/** The only home of SQL on `templates` and `template_events`. */
@Injectable()
export class TemplateStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Keeps the event (a re-sent one is the same event: stored once) and
   * moves the template's latest status forward.
   */
  async record(event: TemplateEvent): Promise<void> {
    const params = [
      event.channelAccountId,
      event.templateId,
      event.templateName,
      event.templateLanguage,
      event.event,
      event.reason,
      event.at,
    ];
    await this.db.query(
      `INSERT INTO template_events
         (channel_account_id, template_id, template_name, template_language, event, reason, event_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (template_id, event, event_at) DO NOTHING`,
      params,
    );
    await this.db.query(
      `INSERT INTO templates
         (channel_account_id, template_id, template_name, template_language, status, reason, status_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (template_id) DO UPDATE SET
         template_name = COALESCE(EXCLUDED.template_name, templates.template_name),
         template_language = COALESCE(EXCLUDED.template_language, templates.template_language),
         status = EXCLUDED.status, reason = EXCLUDED.reason, status_at = EXCLUDED.status_at,
         updated_at = now()
       WHERE templates.status_at <= EXCLUDED.status_at`,
      params,
    );
  }
}
