import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { AppException } from '../common/app.exception.js';
import type { Instance } from '../instances/instance.types.js';
import { InstancesService } from '../instances/instances.service.js';
import { PlatformError } from '../platform/platform.errors.js';
import type { PlatformTemplate } from '../platform/platform.types.js';
import { TEMPLATE_SYNC_JOB, TEMPLATE_SYNC_QUEUE, type TemplateSyncJob } from '../queue/queues.js';
import type {
  CreateTemplateDto,
  ListTemplatesQueryDto,
  TemplatePageDto,
  TemplatePreviewDto,
} from './dto/template.dto.js';
import { TemplateDto } from './dto/template.dto.js';
import { checkDraft, platformDraft } from './template-draft.js';
import {
  checkSendComponents,
  parameterFormatOf,
  renderTemplate,
  templateSlots,
  type SendComponent,
} from './template-params.js';
import { TemplateStore, type TemplatePosition } from './template.store.js';
import type { CatalogueTemplate, SyncedTemplate } from './template.types.js';

/** How long asking for a sync may wait for Redis. */
const REQUEST_SYNC_WAIT_MS = 2000;

/** A sync reads at most this many pages (100 templates each): a loop guard, far above any account's. */
const MAX_SYNC_PAGES = 1000;

/** The template a send names, as /send/template and campaigns give it. */
export interface TemplateUse {
  template_name: string;
  language?: string;
  components?: SendComponent[];
}

/** The platform's template errors, and the code each answers with. */
const TEMPLATE_ERRORS: Record<
  number,
  { code: ConstructorParameters<typeof AppException>[0]; resync: boolean; message: string }
> = {
  132000: {
    code: 'template_parameter_mismatch',
    resync: false,
    message: "the number of parameters does not match the template's variables",
  },
  132001: {
    code: 'template_not_found',
    resync: true,
    message: 'the template does not exist in that language',
  },
  132005: {
    code: 'template_text_too_long',
    resync: false,
    message: 'the text with the parameters put in is too long',
  },
  132007: {
    code: 'template_policy_violation',
    resync: false,
    message: "the content breaks the platform's format policy",
  },
  132012: {
    code: 'template_parameter_mismatch',
    resync: false,
    message: "a parameter's format does not match the template's variable",
  },
  132015: { code: 'template_not_approved', resync: true, message: 'the template is paused' },
  132016: { code: 'template_not_approved', resync: true, message: 'the template is disabled' },
};

const qualityOf = (template: PlatformTemplate): string | null => {
  const quality = template.quality_score;
  if (typeof quality === 'string') return quality;
  return quality?.score ?? null;
};

function synced(template: PlatformTemplate): SyncedTemplate {
  const components = Array.isArray(template.components) ? template.components : [];
  return {
    id: String(template.id),
    name: template.name,
    language: template.language,
    status: String(template.status ?? 'PENDING').toUpperCase(),
    category: template.category ? template.category.toUpperCase() : null,
    components,
    parameterFormat: parameterFormatOf(template.parameter_format, components),
    quality: qualityOf(template),
    reason:
      template.rejected_reason && template.rejected_reason !== 'NONE'
        ? template.rejected_reason
        : null,
    previousCategory: template.previous_category ?? null,
  };
}

function encodePosition(position: TemplatePosition): string {
  return Buffer.from(JSON.stringify([position.name, position.id])).toString('base64url');
}

function decodePosition(cursor: string): TemplatePosition {
  try {
    const [name, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof name === 'string' && typeof id === 'string' && id.length <= 64) return { name, id };
  } catch {
    // reported below
  }
  throw AppException.validation([
    { field: 'cursor', message: 'must be a cursor from next_cursor' },
  ]);
}

/**
 * The template catalogue of each business account: synced from the
 * platform, kept current by its webhooks (InboundService → TemplateStore),
 * managed through it, and the check a template send passes before it leaves.
 */
@Injectable()
export class TemplatesService {
  private readonly logger = new Logger(TemplatesService.name);

  constructor(
    private readonly store: TemplateStore,
    private readonly instances: InstancesService,
    @InjectQueue(TEMPLATE_SYNC_QUEUE) private readonly queue: Queue<TemplateSyncJob>,
  ) {}

  /** Reads the account's whole catalogue, page by page; drops what the platform no longer lists. */
  async sync(instance: Instance): Promise<{ templates: number; removed: number }> {
    const session = this.instances.session(instance);
    const account = instance.channel_account_id;
    const readAt = new Date();
    let after: string | undefined;
    let templates = 0;
    for (let page = 0; page < MAX_SYNC_PAGES; page++) {
      const answer = await session.templates(after);
      await this.store.saveSynced(account, answer.templates.map(synced), readAt);
      templates += answer.templates.length;
      after = answer.next;
      if (!after) break;
    }
    // A sync cut short by the guard removes nothing: what it did not read may exist.
    const removed = after ? 0 : await this.store.removeUnlisted(account, readAt);
    this.logger.log({ channelAccountId: account, templates, removed }, 'template catalogue synced');
    return { templates, removed };
  }

  /** The job's sync of one instance's account; an instance gone or deactivated is skipped. */
  async syncInstance(instanceId: string): Promise<void> {
    // Read from the database, not the request path's cache: a job is rare, and fills no cache.
    const instance = await this.instances.get(instanceId).catch((error: unknown) => {
      if (error instanceof AppException && error.code === 'instance_not_found') return null;
      throw error;
    });
    if (!instance?.is_active) return;
    await this.sync(instance);
  }

  /**
   * Every account with an active instance, through the first of its
   * instances whose token the platform has not refused; one account's
   * failure does not stop the others (it throws at the end, for the retry).
   */
  async syncAll(): Promise<void> {
    const byAccount = new Map<string, Instance>();
    for (const instance of await this.instances.list()) {
      if (!instance.is_active || instance.token_rejected_at) continue;
      if (!byAccount.has(instance.channel_account_id)) {
        byAccount.set(instance.channel_account_id, instance);
      }
    }
    let failed = 0;
    for (const instance of byAccount.values()) {
      await this.sync(instance).catch((error: unknown) => {
        failed++;
        this.logger.warn(
          { channelAccountId: instance.channel_account_id, err: (error as Error).message },
          'template sync failed',
        );
      });
    }
    if (failed > 0) throw new Error(`${failed} template catalogue(s) could not be synced`);
  }

  /**
   * Asks the workers to sync the instance's account soon (once, however
   * often asked meanwhile). Never waits long: with Redis away the request is
   * dropped after a moment (the interval's sync comes anyway).
   */
  async requestSync(instance: Pick<Instance, 'id' | 'channel_account_id'>): Promise<void> {
    const queued = this.queue.add(
      TEMPLATE_SYNC_JOB,
      { instanceId: instance.id },
      { deduplication: { id: `account:${instance.channel_account_id}` } },
    );
    const warn = (error: unknown) => {
      this.logger.warn(
        { instanceId: instance.id, err: (error as Error).message },
        'a template sync could not be queued',
      );
    };
    queued.catch(warn);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        warn(new Error('Redis did not answer'));
        resolve();
      }, REQUEST_SYNC_WAIT_MS);
    });
    await Promise.race([
      queued.then(
        () => undefined,
        () => undefined,
      ),
      late,
    ]);
    clearTimeout(timer);
  }

  async list(instance: Instance, query: ListTemplatesQueryDto): Promise<TemplatePageDto> {
    const limit = query.limit ?? 20;
    const after = query.cursor ? decodePosition(query.cursor) : null;
    const found = await this.store.list(
      instance.channel_account_id,
      {
        namePrefix: query.name,
        language: query.language,
        status: query.status,
        category: query.category,
      },
      after,
      limit + 1,
    );
    const page = found.slice(0, limit);
    const last = page[page.length - 1];
    return {
      data: page.map((template) => TemplateDto.from(template)),
      next_cursor:
        found.length > limit && last
          ? encodePosition({ name: last.name ?? '', id: last.id })
          : null,
    };
  }

  async get(instance: Instance, id: string): Promise<CatalogueTemplate> {
    const template = await this.store.get(instance.channel_account_id, id);
    if (!template) {
      throw new AppException(
        'template_id_not_found',
        `No template ${id} in the catalogue of this business account (POST /templates/sync reads it again)`,
      );
    }
    return template;
  }

  /** Checks the template, submits it for review and keeps it in the catalogue as the platform answered. */
  async create(instance: Instance, dto: CreateTemplateDto): Promise<CatalogueTemplate> {
    const errors = checkDraft(dto);
    if (errors.length > 0) throw AppException.validation(errors);
    const draft = platformDraft(dto);
    const created = await this.instances.session(instance).createTemplate(draft);
    await this.store.saveSynced(
      instance.channel_account_id,
      [
        synced({
          id: String(created.id),
          name: draft.name,
          language: draft.language,
          status: created.status ?? 'PENDING',
          category: created.category ?? draft.category,
          parameter_format: draft.parameter_format,
          components: draft.components,
        }),
      ],
      new Date(),
    );
    return this.get(instance, String(created.id));
  }

  /** Deletes a template on the platform (every language, or one), then from the catalogue. */
  async remove(instance: Instance, name: string, language?: string): Promise<string[]> {
    const known = await this.store.byName(instance.channel_account_id, name);
    const one = language ? known.find((template) => template.language === language) : undefined;
    if (language && !one) throw this.notFound(name, language, known);
    await this.instances.session(instance).deleteTemplate(name, one?.id);
    return this.store.removeByName(instance.channel_account_id, name, language ?? null);
  }

  /** The text a customer would see for the given parameters. */
  async preview(
    instance: Instance,
    id: string,
    components: SendComponent[],
  ): Promise<TemplatePreviewDto> {
    const template = await this.get(instance, id);
    const parts = template.components ?? [];
    const format = template.parameterFormat ?? parameterFormatOf(null, parts);
    const errors = checkSendComponents(templateSlots(parts), format, components);
    if (errors.length > 0) throw AppException.validation(errors);
    return renderTemplate(parts, format, components);
  }

  /**
   * What a template send must pass, when the catalogue knows the template:
   * the language exists, it is approved, and the components fill its
   * variables. A template the catalogue does not know yet goes out as asked.
   * The template found, if any.
   */
  async checkSend(
    instance: Instance,
    use: TemplateUse,
    /** A campaign checks each recipient's parameters itself. */
    options: { skipParameters?: boolean } = {},
  ): Promise<CatalogueTemplate | null> {
    const known = await this.store.byName(instance.channel_account_id, use.template_name);
    if (known.length === 0) return null;
    const language = use.language ?? 'pt_BR';
    const template = known.find((candidate) => candidate.language === language);
    if (!template) throw this.notFound(use.template_name, language, known);
    if (template.status !== 'APPROVED') {
      throw new AppException(
        'template_not_approved',
        `Template ${use.template_name} (${language}) is ${template.status.toLowerCase()}, not approved: it cannot be sent`,
        [{ status: template.status, reason: template.reason }],
      );
    }
    if (template.components && !options.skipParameters) {
      const format = template.parameterFormat ?? parameterFormatOf(null, template.components);
      const errors = checkSendComponents(
        templateSlots(template.components),
        format,
        use.components ?? [],
      );
      if (errors.length > 0) throw AppException.validation(errors);
    }
    return template;
  }

  /**
   * A platform refusal of a template send, in the template's words: its
   * code, and a resync of the catalogue where it was out of date. Other
   * errors are returned as they are.
   */
  explainSendError(instance: Instance, use: TemplateUse, error: unknown): unknown {
    if (!(error instanceof PlatformError)) return error;
    const code = error.failure.platformCode;
    const known = code === undefined ? undefined : TEMPLATE_ERRORS[code];
    if (!known) return error;
    if (known.resync) void this.requestSync(instance);
    return new AppException(
      known.code,
      `Template ${use.template_name} (${use.language ?? 'pt_BR'}): ${known.message}`,
      error.details,
    );
  }

  private notFound(name: string, language: string, known: CatalogueTemplate[]): AppException {
    const languages = known.flatMap((template) => (template.language ? [template.language] : []));
    return new AppException(
      'template_not_found',
      `Template ${name} has no ${language} version${languages.length > 0 ? ` (it has ${languages.join(', ')})` : ''}`,
      [{ name, language, languages }],
    );
  }
}
