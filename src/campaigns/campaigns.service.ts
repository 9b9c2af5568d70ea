import { Injectable } from '@nestjs/common';
import type {} from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { AppException, type FieldError } from '../common/app.exception.js';
import { malformedForm } from '../common/malformed-form.js';
import { decodeCursor, encodeCursor } from '../common/time-id-cursor.js';
import { AppValidationPipe } from '../common/validation.js';
import type { Instance } from '../instances/instance.types.js';
import { USER_ID_PATTERN } from '../send/dto/send-base.dto.js';
import {
  checkSendComponents,
  componentsFor,
  parameterFormatOf,
  templateSlots,
} from '../templates/template-params.js';
import { TemplatesService } from '../templates/templates.service.js';
import { csvRows, spoolCsv } from './campaign-csv.js';
import { CampaignStore, type NewCampaign } from './campaign.store.js';
import { DailyAllowance } from './daily-allowance.js';
import {
  CAMPAIGN_ACTIONS,
  type Campaign,
  type CampaignAction,
  type NewRecipient,
  type RecipientState,
} from './campaign.types.js';
import {
  CampaignDto,
  RecipientDto,
  recipientAddressErrors,
  type CampaignPageDto,
  CsvCampaignDto,
  MAX_CSV_BYTES,
  MAX_CSV_RECIPIENTS,
  type CreateCampaignDto,
  type ListCampaignsQueryDto,
  type ListRecipientsQueryDto,
  type RecipientPageDto,
} from './dto/campaign.dto.js';

/** At most this many parameter errors are named at once. */
const MAX_ERRORS = 20;
/** CSV rows written per INSERT. */
const CSV_BATCH = 5000;

/** How a new campaign reads its recipients, once its template is known. */
interface CampaignPlan {
  campaign: Omit<NewCampaign, 'duplicates' | 'invalid'>;
  /** The recipient to keep, or null when its address is no number nor user id. */
  recipient(
    to: string | undefined,
    userId: string | undefined,
    parameters: Record<string, string> | undefined,
  ): NewRecipient | null;
  /** What is wrong with a recipient's parameters for the template (none: nothing). */
  parameterErrors(recipient: NewRecipient): string[];
}

/** A validation error of a form field's JSON, its fields named under the form field. */
function prefixed(error: unknown, field: string): unknown {
  if (!(error instanceof AppException) || error.code !== 'validation_failed' || !error.details) {
    return error;
  }
  return AppException.validation(
    (error.details as FieldError[]).map((detail) => ({
      field: detail.field === 'body' ? field : `${field}.${detail.field}`,
      message: detail.message,
    })),
  );
}

function noRecipients(field: string): AppException {
  return AppException.validation([
    { field, message: 'holds no valid recipient (numbers are 8 to 15 digits)' },
  ]);
}

/** A number as a list may write it (+55 11 99999-0000): its digits, or null when it is no number. */
export function normalizeNumber(value: string): string | null {
  const digits = value.replace(/[\s().+-]/g, '');
  return /^\d{8,15}$/.test(digits) ? digits : null;
}

/**
 * Campaigns: created from an approved template of the catalogue and a list
 * of recipients (duplicates and invalid numbers counted, not kept), moved
 * through their states by people and clients, sent by the workers
 * (CampaignRunner), reported with their progress.
 */
@Injectable()
export class CampaignsService {
  constructor(
    private readonly store: CampaignStore,
    private readonly templates: TemplatesService,
    private readonly allowance: DailyAllowance,
  ) {}

  async create(instance: Instance, dto: CreateCampaignDto): Promise<CampaignDto> {
    const addressErrors = recipientAddressErrors(dto.recipients);
    if (addressErrors.length > 0) throw AppException.validation(addressErrors.slice(0, MAX_ERRORS));
    const plan = await this.plan(instance, dto);
    const seen = new Set<string>();
    const recipients: NewRecipient[] = [];
    const errors: FieldError[] = [];
    let duplicates = 0;
    let invalid = 0;
    dto.recipients.forEach((given, index) => {
      const recipient = plan.recipient(given.to, given.recipient, given.parameters);
      if (!recipient) {
        invalid++;
        return;
      }
      const address = recipient.to ?? recipient.recipient!;
      if (seen.has(address)) {
        duplicates++;
        return;
      }
      seen.add(address);
      if (errors.length < MAX_ERRORS) {
        for (const message of plan.parameterErrors(recipient)) {
          errors.push({ field: `recipients[${index}].parameters`, message });
        }
      }
      recipients.push(recipient);
    });
    if (errors.length > 0) throw AppException.validation(errors.slice(0, MAX_ERRORS));
    if (recipients.length === 0) throw noRecipients('recipients');
    const campaign = await this.store.create({ ...plan.campaign, duplicates, invalid }, recipients);
    if (dto.start) return this.act(instance, campaign.id, 'start');
    return this.describe(campaign);
  }

  /**
   * Reads POST /campaigns/upload's form: the `campaign` field (JSON, checked
   * as a body is), then the CSV `file`, streamed into createFromCsv.
   */
  async upload(instance: Instance, request: FastifyRequest): Promise<CampaignDto> {
    if (!request.isMultipart()) {
      throw new AppException(
        'unsupported_media_type',
        'Send multipart/form-data with the fields campaign (JSON) and then file (CSV)',
      );
    }
    const part = await request
      .file({ limits: { fileSize: MAX_CSV_BYTES + 1, files: 1 } })
      .catch((error: unknown) => {
        throw malformedForm(error);
      });
    if (!part) throw AppException.validation([{ field: 'file', message: 'is required' }]);
    let spooled: string | undefined;
    try {
      const field = part.fields.campaign;
      if (!field || Array.isArray(field) || field.type !== 'field') {
        throw AppException.validation([
          { field: 'campaign', message: 'is required: a JSON object, before the file' },
        ]);
      }
      // A part sent as application/json arrives parsed; one sent as text is parsed here.
      let given: unknown = field.value;
      if (typeof given === 'string') {
        try {
          given = JSON.parse(given);
        } catch {
          throw AppException.validation([{ field: 'campaign', message: 'must be a JSON object' }]);
        }
      }
      const dto = (await new AppValidationPipe(CsvCampaignDto)
        .transform(given, { type: 'body', metatype: CsvCampaignDto })
        .catch((error: unknown) => {
          throw prefixed(error, 'campaign');
        })) as CsvCampaignDto;
      if (dto.columns.to === undefined && dto.columns.recipient === undefined) {
        throw AppException.validation([
          { field: 'campaign.columns', message: 'must name the column of to or of recipient' },
        ]);
      }
      // The template before the file: a refusal costs no upload.
      const plan = await this.plan(instance, dto);
      spooled = await spoolCsv(part.file, MAX_CSV_BYTES);
      return await this.importCsv(instance, dto, plan, createReadStream(spooled));
    } finally {
      if (spooled) await rm(spooled, { force: true });
      // Refused before the file was read: let it flow past the parser.
      if (!part.file.destroyed) part.file.resume();
    }
  }

  /**
   * The recipients are the rows of a CSV (read from a local copy), written
   * in batches within one transaction (nothing is kept of a file refused
   * halfway). Duplicates are found by the table's unique addresses, so
   * memory does not grow with the list.
   */
  private async importCsv(
    instance: Instance,
    dto: CsvCampaignDto,
    plan: CampaignPlan,
    file: AsyncIterable<Buffer>,
  ): Promise<CampaignDto> {
    const { columns } = dto;
    const parameterColumns = Object.entries(columns.parameters ?? {});
    let invalid = 0;
    let rows = 0;
    async function* batches(): AsyncGenerator<NewRecipient[]> {
      let batch: NewRecipient[] = [];
      const errors: FieldError[] = [];
      for await (const row of csvRows(file, columns, MAX_CSV_RECIPIENTS)) {
        rows++;
        const to = columns.to !== undefined ? row.cells[columns.to] || undefined : undefined;
        const userId =
          to === undefined && columns.recipient !== undefined
            ? row.cells[columns.recipient] || undefined
            : undefined;
        // An empty cell is a parameter not given (the platform refuses an empty one).
        const filled = parameterColumns.filter(([, column]) => row.cells[column]);
        const parameters =
          filled.length > 0
            ? Object.fromEntries(
                filled.map(([parameter, column]) => [parameter, row.cells[column]]),
              )
            : undefined;
        const recipient = plan.recipient(to, userId, parameters);
        if (!recipient) {
          invalid++;
          continue;
        }
        for (const message of plan.parameterErrors(recipient)) {
          errors.push({ field: 'file', message: `line ${row.line}: ${message}` });
        }
        if (errors.length >= MAX_ERRORS) break;
        batch.push(recipient);
        if (batch.length === CSV_BATCH) {
          if (errors.length === 0) yield batch;
          batch = [];
        }
      }
      if (errors.length > 0) throw AppException.validation(errors.slice(0, MAX_ERRORS));
      if (batch.length > 0) yield batch;
    }
    const campaign = await this.store.createStreamed(plan.campaign, batches(), (kept) => {
      if (kept === 0) throw noRecipients('file');
      return { duplicates: rows - invalid - kept, invalid };
    });
    if (dto.start) return this.act(instance, campaign.id, 'start');
    return this.describe(campaign);
  }

  /** The template a new campaign sends (checked against the catalogue) and how a recipient is read. */
  private async plan(
    instance: Instance,
    dto: Pick<
      CreateCampaignDto,
      'name' | 'template_name' | 'language' | 'components' | 'start_at' | 'rate_per_s'
    >,
  ): Promise<CampaignPlan> {
    const template = await this.templates.checkSend(
      instance,
      {
        template_name: dto.template_name,
        language: dto.language,
        components: dto.components,
      },
      { skipParameters: true },
    );
    if (!template) {
      throw new AppException(
        'template_not_found',
        `Template ${dto.template_name} is not in the catalogue: a campaign sends only templates the catalogue knows (POST /templates/sync reads it)`,
        [{ name: dto.template_name, language: dto.language ?? 'pt_BR', languages: [] }],
      );
    }
    const parts = template.components ?? [];
    const format = template.parameterFormat ?? parameterFormatOf(null, parts);
    const slots = templateSlots(parts);
    const shared = dto.components ?? [];
    return {
      campaign: {
        instanceId: instance.id,
        name: dto.name,
        templateId: template.id,
        templateName: dto.template_name,
        templateLanguage: dto.language ?? 'pt_BR',
        templateCategory: template.pendingCategory ?? template.category,
        components: shared,
        startAt: dto.start_at ? new Date(dto.start_at) : null,
        ratePerS: dto.rate_per_s ?? null,
      },
      recipient: (to, userId, parameters) => {
        const address =
          to !== undefined
            ? normalizeNumber(to)
            : userId !== undefined && USER_ID_PATTERN.test(userId)
              ? userId
              : null;
        if (address === null) return null;
        return {
          ...(to !== undefined ? { to: address } : { recipient: address }),
          ...(parameters ? { parameters } : {}),
        };
      },
      parameterErrors: (recipient) =>
        checkSendComponents(
          slots,
          format,
          componentsFor(slots, format, shared, recipient.parameters ?? {}),
        ).map((error) => error.message),
    };
  }

  async list(instance: Instance, query: ListCampaignsQueryDto): Promise<CampaignPageDto> {
    const limit = query.limit ?? 20;
    const found = await this.store.list(
      instance.id,
      query.cursor ? decodeCursor(query.cursor) : null,
      limit + 1,
    );
    const page = found.slice(0, limit);
    return {
      data: await Promise.all(page.map((campaign) => this.describe(campaign, instance))),
      next_cursor:
        found.length > limit
          ? encodeCursor({ atMicros: page[page.length - 1].position, id: page[page.length - 1].id })
          : null,
    };
  }

  async get(instance: Instance, id: string): Promise<CampaignDto> {
    return this.describe(await this.find(instance, id), instance);
  }

  /** start, pause, resume or cancel; 409 when the campaign's state does not allow it. */
  async act(instance: Instance, id: string, action: CampaignAction): Promise<CampaignDto> {
    const campaign = await this.find(instance, id);
    const rule = CAMPAIGN_ACTIONS[action];
    const later = campaign.start_at !== null && campaign.start_at.getTime() > Date.now();
    const to = (action === 'start' || action === 'resume') && later ? 'scheduled' : rule.to;
    // Resuming confirms the template as it is now (a category the platform changed included).
    const moved =
      action === 'resume'
        ? await this.store.resume(campaign.id, to)
        : await this.store.transition(
            campaign.id,
            rule.from,
            to,
            action === 'pause' ? 'requested' : null,
          );
    if (!moved) {
      throw new AppException(
        'campaign_state_conflict',
        `Campaign ${campaign.id} is ${campaign.state}: it cannot ${action} (only from ${rule.from.join(', ')})`,
        [{ state: campaign.state }],
      );
    }
    return this.describe(moved, instance);
  }

  async recipients(
    instance: Instance,
    id: string,
    query: ListRecipientsQueryDto,
  ): Promise<RecipientPageDto> {
    const campaign = await this.find(instance, id);
    const limit = query.limit ?? 50;
    const after = query.cursor ? Number(query.cursor) : 0;
    if (!Number.isSafeInteger(after) || after < 0) {
      throw AppException.validation([
        { field: 'cursor', message: 'must be a cursor from next_cursor' },
      ]);
    }
    const found = await this.store.recipients(
      campaign.id,
      (query.state as RecipientState | undefined) ?? null,
      after,
      limit + 1,
    );
    const page = found.slice(0, limit);
    return {
      data: page.map((recipient) => RecipientDto.from(recipient)),
      next_cursor: found.length > limit ? String(page[page.length - 1].seq) : null,
    };
  }

  private async find(instance: Instance, id: string): Promise<Campaign> {
    const campaign = /^[0-9a-f-]{36}$/i.test(id) ? await this.store.get(id, instance.id) : null;
    if (!campaign)
      throw new AppException('campaign_not_found', `No campaign ${id} on this instance`);
    return campaign;
  }

  private async describe(campaign: Campaign, instance?: Instance): Promise<CampaignDto> {
    const progress = await this.store.progress(campaign);
    const waiting =
      instance &&
      campaign.state === 'running' &&
      progress.queued > 0 &&
      (await this.allowance.left(instance, true)) <= 0;
    return CampaignDto.from(campaign, progress, waiting ? 'daily_limit' : null);
  }
}
