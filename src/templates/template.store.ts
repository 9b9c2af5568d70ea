import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { rows } from '../database/sql.js';
import type { PlatformTemplateComponent } from '../platform/platform.types.js';
import type { ParameterFormat } from './template-params.js';
import type {
  CatalogueTemplate,
  SyncedTemplate,
  TemplateEvent,
  TemplateFilter,
} from './template.types.js';

interface TemplateRow {
  template_id: string;
  channel_account_id: string;
  template_name: string | null;
  template_language: string | null;
  status: string;
  category: string | null;
  components: PlatformTemplateComponent[] | null;
  parameter_format: ParameterFormat | null;
  quality: string | null;
  reason: string | null;
  previous_category: string | null;
  pending_category: string | null;
  status_at: Date;
  synced_at: Date | null;
  updated_at: Date;
}

const toTemplate = (row: TemplateRow): CatalogueTemplate => ({
  id: row.template_id,
  channelAccountId: row.channel_account_id,
  name: row.template_name,
  language: row.template_language,
  status: row.status,
  category: row.category,
  components: row.components,
  parameterFormat: row.parameter_format,
  quality: row.quality,
  reason: row.reason,
  previousCategory: row.previous_category,
  pendingCategory: row.pending_category,
  statusAt: row.status_at,
  syncedAt: row.synced_at,
  updatedAt: row.updated_at,
});

/** Where a catalogue page starts: after this name and id. */
export interface TemplatePosition {
  name: string;
  id: string;
}

/** The only home of SQL on `templates` and `template_events`. */
@Injectable()
export class TemplateStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Keeps the event (a re-sent one is the same event: stored once) and
   * moves the template forward: its status, quality or category. A status
   * older than the one kept (a late delivery, or a sync read after it) is
   * kept as an event only.
   */
  async record(event: TemplateEvent): Promise<void> {
    const change = event.change ?? 'status';
    await this.db.query(
      `INSERT INTO template_events
         (channel_account_id, template_id, template_name, template_language, event, reason,
          event_at, change, quality, category, previous_category)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (template_id, event, event_at) DO NOTHING`,
      [
        event.channelAccountId,
        event.templateId,
        event.templateName,
        event.templateLanguage,
        event.event,
        event.reason,
        event.at,
        change,
        event.quality ?? null,
        event.category ?? null,
        event.previousCategory ?? null,
      ],
    );
    const known = [
      event.channelAccountId,
      event.templateId,
      event.templateName,
      event.templateLanguage,
    ];
    if (change === 'status') {
      await this.db.query(
        `INSERT INTO templates
           (channel_account_id, template_id, template_name, template_language, status, reason,
            status_at, category, heard_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $7)
         ON CONFLICT (template_id) DO UPDATE SET
           template_name = COALESCE(EXCLUDED.template_name, templates.template_name),
           template_language = COALESCE(EXCLUDED.template_language, templates.template_language),
           category = COALESCE(EXCLUDED.category, templates.category),
           status = EXCLUDED.status, reason = EXCLUDED.reason, status_at = EXCLUDED.status_at,
           heard_at = GREATEST(templates.heard_at, EXCLUDED.heard_at), updated_at = now()
         WHERE templates.status_at <= EXCLUDED.status_at`,
        [...known, event.event, event.reason, event.at, event.category ?? null],
      );
    } else if (change === 'quality') {
      await this.db.query(
        `UPDATE templates SET quality = $3, heard_at = GREATEST(heard_at, $4), updated_at = now()
         WHERE channel_account_id = $1 AND template_id = $2`,
        [event.channelAccountId, event.templateId, event.quality ?? event.event, event.at],
      );
    } else if (event.announced) {
      await this.db.query(
        `UPDATE templates SET pending_category = $3, heard_at = GREATEST(heard_at, $4),
           updated_at = now()
         WHERE channel_account_id = $1 AND template_id = $2`,
        [event.channelAccountId, event.templateId, event.category, event.at],
      );
    } else {
      await this.db.query(
        `UPDATE templates SET category = $3,
           previous_category = COALESCE($4, category), pending_category = NULL,
           heard_at = GREATEST(heard_at, $5), updated_at = now()
         WHERE channel_account_id = $1 AND template_id = $2`,
        [
          event.channelAccountId,
          event.templateId,
          event.category,
          event.previousCategory ?? null,
          event.at,
        ],
      );
    }
  }

  /**
   * Writes templates as the platform listed them at `readAt`. A status a
   * webhook moved in that second or later stays (a webhook's time is whole
   * seconds: within the second of the read, the change it tells of wins);
   * everything else is the list's.
   */
  async saveSynced(
    channelAccountId: string,
    templates: SyncedTemplate[],
    readAt: Date,
  ): Promise<void> {
    if (templates.length === 0) return;
    await this.db.query(
      `INSERT INTO templates AS t
         (channel_account_id, template_id, template_name, template_language, status, reason,
          status_at, category, components, parameter_format, quality, previous_category,
          synced_at)
       SELECT $1, s.id, s.name, s.language, s.status, s.reason, date_trunc('second', $3::timestamptz),
         s.category, s.components,
         s.parameter_format, s.quality, s.previous_category, $3
       FROM jsonb_to_recordset($2::jsonb) AS s(id text, name text, language text, status text,
         reason text, category text, components jsonb, parameter_format text, quality text,
         previous_category text)
       ON CONFLICT (template_id) DO UPDATE SET
         template_name = EXCLUDED.template_name,
         template_language = EXCLUDED.template_language,
         category = EXCLUDED.category,
         components = EXCLUDED.components,
         parameter_format = EXCLUDED.parameter_format,
         quality = COALESCE(EXCLUDED.quality, t.quality),
         previous_category = COALESCE(EXCLUDED.previous_category, t.previous_category),
         status = CASE WHEN t.status_at < EXCLUDED.status_at THEN EXCLUDED.status ELSE t.status END,
         reason = CASE WHEN t.status_at < EXCLUDED.status_at THEN EXCLUDED.reason ELSE t.reason END,
         status_at = GREATEST(t.status_at, EXCLUDED.status_at),
         synced_at = $3,
         updated_at = now()
       WHERE t.channel_account_id = EXCLUDED.channel_account_id`,
      [
        channelAccountId,
        JSON.stringify(
          templates.map((template) => ({
            id: template.id,
            name: template.name,
            language: template.language,
            status: template.status,
            reason: template.reason,
            category: template.category,
            components: template.components,
            parameter_format: template.parameterFormat,
            quality: template.quality,
            previous_category: template.previousCategory,
          })),
        ),
        readAt,
      ],
    );
  }

  /**
   * Drops what a whole sync begun at `readAt` did not list: deleted on the
   * platform. A template a webhook told of in that second or since stays.
   * The count removed.
   */
  async removeUnlisted(channelAccountId: string, readAt: Date): Promise<number> {
    const removed = await rows<{ template_id: string }>(
      this.db,
      `DELETE FROM templates
       WHERE channel_account_id = $1 AND (synced_at IS NULL OR synced_at < $2)
         AND (heard_at IS NULL OR heard_at < date_trunc('second', $2::timestamptz))
       RETURNING template_id`,
      [channelAccountId, readAt],
    );
    return removed.length;
  }

  /** A page of the account's catalogue by name, then id. */
  async list(
    channelAccountId: string,
    filter: TemplateFilter,
    after: TemplatePosition | null,
    limit: number,
  ): Promise<CatalogueTemplate[]> {
    const found = await rows<TemplateRow>(
      this.db,
      `SELECT * FROM templates
       WHERE channel_account_id = $1
         AND ($2::text IS NULL OR starts_with(template_name, $2))
         AND ($3::text IS NULL OR template_language = $3)
         AND ($4::text IS NULL OR status = $4)
         AND ($5::text IS NULL OR category = $5)
         AND ($6::text IS NULL OR (COALESCE(template_name, ''), template_id) > ($6, $7))
       ORDER BY COALESCE(template_name, ''), template_id
       LIMIT $8`,
      [
        channelAccountId,
        filter.namePrefix ?? null,
        filter.language ?? null,
        filter.status ?? null,
        filter.category ?? null,
        after?.name ?? null,
        after?.id ?? null,
        limit,
      ],
    );
    return found.map(toTemplate);
  }

  async get(channelAccountId: string, templateId: string): Promise<CatalogueTemplate | null> {
    const [found] = await rows<TemplateRow>(
      this.db,
      `SELECT * FROM templates WHERE channel_account_id = $1 AND template_id = $2`,
      [channelAccountId, templateId],
    );
    return found ? toTemplate(found) : null;
  }

  /** Every language of a template name in the account's catalogue. */
  async byName(channelAccountId: string, name: string): Promise<CatalogueTemplate[]> {
    const found = await rows<TemplateRow>(
      this.db,
      `SELECT * FROM templates WHERE channel_account_id = $1 AND template_name = $2
       ORDER BY template_language`,
      [channelAccountId, name],
    );
    return found.map(toTemplate);
  }

  /** Removes a deleted template: every language, or one. The ids removed. */
  async removeByName(
    channelAccountId: string,
    name: string,
    language: string | null,
  ): Promise<string[]> {
    const removed = await rows<{ template_id: string }>(
      this.db,
      `DELETE FROM templates
       WHERE channel_account_id = $1 AND template_name = $2
         AND ($3::text IS NULL OR template_language = $3)
       RETURNING template_id`,
      [channelAccountId, name, language],
    );
    return removed.map((row) => row.template_id);
  }
}
