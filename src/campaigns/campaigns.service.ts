import { Injectable } from '@nestjs/common';
import { AppException, type FieldError } from '../common/app.exception.js';
import { decodeCursor, encodeCursor } from '../common/time-id-cursor.js';
import type { Instance } from '../instances/instance.types.js';
import { USER_ID_PATTERN } from '../send/dto/send-base.dto.js';
import {
  checkSendComponents,
  componentsFor,
  parameterFormatOf,
  templateSlots,
} from '../templates/template-params.js';
import { TemplatesService } from '../templates/templates.service.js';
import { CampaignStore } from './campaign.store.js';
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
  type CreateCampaignDto,
  type ListCampaignsQueryDto,
  type ListRecipientsQueryDto,
  type RecipientPageDto,
} from './dto/campaign.dto.js';

/** At most this many parameter errors are named at once. */
const MAX_ERRORS = 20;

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
  ) {}

  async create(instance: Instance, dto: CreateCampaignDto): Promise<CampaignDto> {
    const addressErrors = recipientAddressErrors(dto.recipients);
    if (addressErrors.length > 0) throw AppException.validation(addressErrors.slice(0, MAX_ERRORS));
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
    const seen = new Set<string>();
    const recipients: NewRecipient[] = [];
    const errors: FieldError[] = [];
    let duplicates = 0;
    let invalid = 0;
    dto.recipients.forEach((given, index) => {
      const address =
        given.to !== undefined
          ? normalizeNumber(given.to)
          : given.recipient !== undefined && USER_ID_PATTERN.test(given.recipient)
            ? given.recipient
            : null;
      if (address === null) {
        invalid++;
        return;
      }
      if (seen.has(address)) {
        duplicates++;
        return;
      }
      seen.add(address);
      if (errors.length < MAX_ERRORS) {
        const components = componentsFor(
          slots,
          format,
          dto.components ?? [],
          given.parameters ?? {},
        );
        for (const error of checkSendComponents(slots, format, components)) {
          errors.push({ field: `recipients[${index}].parameters`, message: error.message });
        }
      }
      recipients.push({
        ...(given.to !== undefined ? { to: address } : { recipient: address }),
        ...(given.parameters ? { parameters: given.parameters } : {}),
      });
    });
    if (errors.length > 0) throw AppException.validation(errors.slice(0, MAX_ERRORS));
    if (recipients.length === 0) {
      throw AppException.validation([
        { field: 'recipients', message: 'holds no valid recipient (numbers are 8 to 15 digits)' },
      ]);
    }
    const campaign = await this.store.create(
      {
        instanceId: instance.id,
        name: dto.name,
        templateId: template.id,
        templateName: dto.template_name,
        templateLanguage: dto.language ?? 'pt_BR',
        templateCategory: template.pendingCategory ?? template.category,
        components: dto.components ?? [],
        startAt: dto.start_at ? new Date(dto.start_at) : null,
        ratePerS: dto.rate_per_s ?? null,
        duplicates,
        invalid,
      },
      recipients,
    );
    if (dto.start) return this.act(instance, campaign.id, 'start');
    return this.describe(campaign);
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
      data: await Promise.all(page.map((campaign) => this.describe(campaign))),
      next_cursor:
        found.length > limit
          ? encodeCursor({ atMicros: page[page.length - 1].position, id: page[page.length - 1].id })
          : null,
    };
  }

  async get(instance: Instance, id: string): Promise<CampaignDto> {
    return this.describe(await this.find(instance, id));
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
    return this.describe(moved);
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

  private async describe(campaign: Campaign): Promise<CampaignDto> {
    return CampaignDto.from(campaign, await this.store.progress(campaign));
  }
}
