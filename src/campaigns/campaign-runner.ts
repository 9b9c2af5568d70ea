import { randomUUID } from 'node:crypto';
import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { ContactStore } from '../contacts/contact.store.js';
import { numberRate, type Instance } from '../instances/instance.types.js';
import { InstancesService } from '../instances/instances.service.js';
import { MessagesService, type Recipient } from '../messages/messages.service.js';
import { PlatformError, INVALID_TOKEN_PLATFORM_CODE } from '../platform/platform.errors.js';
import { MARKETING_STOPPED_CODE } from '../platform/webhook-payload.js';
import type { PlatformMessage } from '../platform/platform-message.js';
import { buildPlatformMessage } from '../send/outbound-message.builder.js';
import { OutboundRecordQueue } from '../send/outbound-records.js';
import { SendPacer } from '../send/send-pacer.js';
import {
  componentsFor,
  parameterFormatOf,
  templateSlots,
  type SendComponent,
} from '../templates/template-params.js';
import { TemplateStore } from '../templates/template.store.js';
import type { CatalogueTemplate } from '../templates/template.types.js';
import { TemplatesService } from '../templates/templates.service.js';
import { CampaignStore, type ClaimedRecipient } from './campaign.store.js';
import { DailyAllowance } from './daily-allowance.js';
import type { Campaign, PauseReason } from './campaign.types.js';

/** How often an idle worker looks for campaigns to send. */
const POLL_MS = 500;
/** How long a worker waits after a round failed (the database away). */
const ERROR_WAIT_MS = 5000;
/** Recipients a worker takes at a time (fewer when the campaign's rate is low). */
const BATCH = 100;
/** Campaigns a worker sends at once, each on its own. */
const PARALLEL_CAMPAIGNS = 8;
/**
 * Campaigns of one number a worker sends at once: they share the number's
 * pace, so more would only wait for it while other numbers' campaigns wait
 * for a place.
 */
export const PARALLEL_PER_NUMBER = 2;
/** Sends of one campaign a worker has in flight at once. */
const CONCURRENCY = 16;
/** How long a worker trusts the campaign's state it read (a pause takes effect within this). */
const STATE_TTL_MS = 250;
/**
 * Failed tries after which a recipient ends failed (`retries_exhausted`),
 * the first at least CAMPAIGN_RETRY_FOR_S before. Not counted: the platform
 * unreachable, saying it is unavailable, or throttling the number: those
 * only hold the campaign back, however long they last.
 */
const MAX_ATTEMPTS = 10;
/**
 * The longest a recipient, or a campaign the platform takes nothing of, waits
 * to be tried again (each wait starts at PLATFORM_RETRY_DELAY_MS, doubling).
 */
const MAX_RECIPIENT_WAIT_S = 300;
const MAX_CAMPAIGN_WAIT_MS = 60_000;

/**
 * The platform's codes that are nobody's fault: the whole number (or app)
 * throttled, the platform unavailable or in maintenance.
 */
const NOT_THE_RECIPIENTS: ReadonlySet<number> = new Set([
  1, 2, 4, 80007, 130429, 131016, 131057, 133004,
]);

/** What one batch came to: the sends that went, the recipients put back for later. */
interface BatchTally {
  sent: number;
  retried: Array<{
    seq: number;
    code: number | null;
    message: string | null;
    retryInS: number;
  }>;
}

/** The platform's codes that pause a campaign, and why. */
const PAUSING_CODES: Record<number, PauseReason> = {
  [INVALID_TOKEN_PLATFORM_CODE]: 'token_rejected',
  132000: 'template_parameter_mismatch',
  132001: 'template_not_found',
  132012: 'template_parameter_mismatch',
  132015: 'template_paused',
  132016: 'template_disabled',
};

const TEMPLATE_PAUSES: Record<string, PauseReason> = {
  PAUSED: 'template_paused',
  DISABLED: 'template_disabled',
};

/**
 * A template message as the marketing messages endpoint takes it: its
 * schema asks for the language's `policy` (the only one there is).
 */
function marketingMessage(message: PlatformMessage): PlatformMessage {
  const template = (message as { template?: { language?: Record<string, unknown> } }).template;
  if (!template?.language) return message;
  return {
    ...message,
    template: { ...template, language: { ...template.language, policy: 'deterministic' } },
  };
}

/** Stops a batch: the campaign paused itself, or the number must wait. */
class BatchStop extends Error {}

/**
 * Sends the running campaigns, in every worker process: each worker claims
 * a few queued recipients at a time (others pass over them), waits for a
 * slot of the number that nothing else wants, marks the recipient `sending`,
 * calls the platform and records the result. A recipient marked `sending` is
 * never sent again: a worker that dies there leaves it to end `failed`
 * (`send_uncertain`) when its lease runs out; what it had only claimed goes
 * back to the queue. A campaign pauses itself when the platform refuses the
 * token, the template is paused, disabled or gone, or its category changed.
 */
@Injectable()
export class CampaignRunner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(CampaignRunner.name);
  private readonly worker = `${process.pid}-${randomUUID().slice(0, 8)}`;
  private readonly stopping = new AbortController();
  private loop?: Promise<void>;
  private readonly states = new Map<string, { state: string; at: number }>();
  /** The campaigns this worker sends a batch of now, and their instance (their number). */
  private readonly active = new Map<string, string>();
  /** The batch each of them has going. */
  private readonly batches = new Map<string, Promise<void>>();
  /** Ends the loop's wait (a batch sent something, its campaign may go on). */
  private waiter?: () => void;
  /** A batch sent while the loop was not waiting: the next wait ends at once. */
  private woken = false;
  /** Campaigns the platform took nothing of lately, not tried again before `until`. */
  private readonly holds = new Map<string, { until: number; waitMs: number }>();

  constructor(
    private readonly store: CampaignStore,
    private readonly templateStore: TemplateStore,
    private readonly templates: TemplatesService,
    private readonly instances: InstancesService,
    private readonly messages: MessagesService,
    private readonly contacts: ContactStore,
    private readonly pacer: SendPacer,
    private readonly parked: OutboundRecordQueue,
    private readonly allowance: DailyAllowance,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.loop = this.run();
  }

  /** Before the database and Redis close: what is in flight finishes, nothing new starts. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping.abort();
    await this.loop;
  }

  private get stopped(): boolean {
    return this.stopping.signal.aborted;
  }

  private async run(): Promise<void> {
    let recoveredAt = 0;
    while (!this.stopped) {
      let wait = POLL_MS;
      try {
        await this.store.startDue();
        // Leases run out no sooner than this: looking more often finds nothing.
        if (Date.now() - recoveredAt >= (this.config.CAMPAIGN_LEASE_S * 1000) / 2) {
          recoveredAt = Date.now();
          const recovered = await this.store.recoverExpired();
          if (recovered.requeued + recovered.uncertain > 0) {
            this.logger.warn(recovered, 'campaign recipients of a stopped worker taken back');
          }
        }
        const running = await this.store.running();
        this.forgetAllBut(new Set(running.map((campaign) => campaign.id)));
        const perNumber = new Map<string, number>();
        for (const instanceId of this.active.values()) {
          perNumber.set(instanceId, (perNumber.get(instanceId) ?? 0) + 1);
        }
        for (const campaign of running) {
          if (this.stopped || this.active.size >= PARALLEL_CAMPAIGNS) break;
          const ofNumber = perNumber.get(campaign.instance_id) ?? 0;
          if (this.active.has(campaign.id) || ofNumber >= PARALLEL_PER_NUMBER) continue;
          perNumber.set(campaign.instance_id, ofNumber + 1);
          this.start(campaign);
        }
      } catch (error) {
        // The database or Redis away: look again a little later.
        wait = ERROR_WAIT_MS;
        this.logger.warn({ err: (error as Error).message }, 'campaign round failed');
      }
      // Until a batch that sent ends (its campaign goes on at once) or the wait is over.
      await this.rest(wait);
    }
    await Promise.allSettled(this.batches.values());
  }

  /** Waits `ms`, or less when woken (a batch sent) or stopping; a wake-up that came early counts. */
  private rest(ms: number): Promise<void> {
    if (this.woken || this.stopped) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.stopping.signal.removeEventListener('abort', done);
        this.waiter = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.stopping.signal.addEventListener('abort', done, { once: true });
      this.waiter = done;
    });
  }

  private wakeUp(): void {
    if (this.waiter) this.waiter();
    else this.woken = true;
  }

  /** What this worker keeps of campaigns that no longer run goes. */
  private forgetAllBut(running: Set<string>): void {
    for (const id of this.holds.keys()) if (!running.has(id)) this.holds.delete(id);
    for (const id of this.states.keys()) if (!running.has(id)) this.states.delete(id);
  }

  /**
   * Runs one batch of a campaign beside the others': a campaign that waits
   * (a low rate, a slow platform) holds up no other.
   */
  private start(campaign: Campaign): void {
    const batch = this.runBatch(campaign)
      .then(
        (sent) => {
          if (sent) this.wakeUp();
        },
        (error: unknown) => {
          // The database or Redis away: this campaign waits a little.
          this.holds.set(campaign.id, { until: Date.now() + ERROR_WAIT_MS, waitMs: ERROR_WAIT_MS });
          this.logger.warn(
            { campaignId: campaign.id, err: (error as Error).message },
            'campaign batch failed',
          );
        },
      )
      .finally(() => {
        this.active.delete(campaign.id);
        this.batches.delete(campaign.id);
      });
    this.active.set(campaign.id, campaign.instance_id);
    this.batches.set(campaign.id, batch);
  }

  /** One batch of a campaign; whether it sent (or settled) anything. */
  private async runBatch(campaign: Campaign): Promise<boolean> {
    const hold = this.holds.get(campaign.id);
    if (hold && Date.now() < hold.until) return false;
    const instance = await this.instances.findById(campaign.instance_id);
    if (!instance?.is_active) {
      await this.pause(campaign, 'instance_inactive');
      return false;
    }
    const template = await this.templateStore.get(
      instance.channel_account_id,
      campaign.template_id,
    );
    const reason = this.templateProblem(campaign, template);
    if (reason) {
      await this.pause(campaign, reason);
      return false;
    }
    // The business's daily limit on new customers: what is left of the campaigns' share.
    const allowance = await this.allowance.left(instance);
    if (allowance <= 0) return false;
    const size = Math.max(1, Math.min(BATCH, Math.ceil(campaign.rate_per_s ?? BATCH), allowance));
    const claimed = await this.store.claim(
      campaign.id,
      this.worker,
      size,
      this.config.CAMPAIGN_LEASE_S,
    );
    this.allowance.reserve(instance, claimed.length);
    if (claimed.length === 0) {
      const done = await this.store.completeIfDone(campaign.id);
      if (done) this.logger.log({ campaignId: campaign.id }, 'campaign completed');
      return false;
    }
    const parts = template!.components ?? [];
    const format = template!.parameterFormat ?? parameterFormatOf(null, parts);
    const slots = templateSlots(parts);
    // The category the template has now decides where marketing goes, and who stopped it.
    const marketing = template!.category === 'MARKETING';
    const optedOut = await this.contacts.optedOut(
      instance.id,
      claimed.flatMap((r) => (r.to_number ? [r.to_number] : [])),
      claimed.flatMap((r) => (r.user_id ? [r.user_id] : [])),
      marketing,
    );
    const left = [...claimed];
    const tally: BatchTally = { sent: 0, retried: [] };
    let stop = false;
    // A few sends in flight at once: the pacer, not one call's round trip, sets the rate.
    const lane = async () => {
      while (!stop && left.length > 0 && !this.stopped) {
        // Taken before the await: another lane may take the last one meanwhile.
        const recipient = left.shift();
        if (!recipient) return;
        if (!(await this.stillRunning(campaign.id))) {
          left.unshift(recipient);
          stop = true;
          return;
        }
        const address = recipient.to_number ?? recipient.user_id!;
        const out = optedOut.get(address);
        if (out) {
          await this.store.finish(campaign.id, recipient.seq, 'skipped', out);
          continue;
        }
        const components = componentsFor(
          slots,
          format,
          campaign.components,
          recipient.parameters ?? {},
        );
        try {
          await this.sendOne(instance, campaign, recipient, components, marketing, tally);
        } catch (error) {
          stop = true;
          // Not sent: released with the rest (a no-op when it was put back already).
          left.unshift(recipient);
          if (!(error instanceof BatchStop)) throw error;
        }
      }
    };
    try {
      // Every lane settles before the batch ends: none runs on after an error.
      const lanes = await Promise.allSettled(
        Array.from({ length: Math.min(CONCURRENCY, claimed.length) }, lane),
      );
      const failure = lanes.find((settled) => settled.status === 'rejected');
      if (failure) throw failure.reason;
    } finally {
      // What no lane took up goes back to the queue (a lease would bring it back anyway).
      await this.store.release(
        campaign.id,
        left.map((recipient) => recipient.seq),
        this.worker,
      );
      this.settle(campaign, tally);
    }
    await this.store.touch(campaign.id);
    return true;
  }

  /**
   * After a batch the platform took nothing of (it put recipients back), the
   * campaign is held back, longer each time, rather than trying the next
   * recipients at once; one that sent goes on.
   */
  private settle(campaign: Campaign, tally: BatchTally): void {
    if (tally.sent > 0 || tally.retried.length === 0) {
      this.holds.delete(campaign.id);
      return;
    }
    const previous = this.holds.get(campaign.id)?.waitMs ?? this.config.PLATFORM_RETRY_DELAY_MS / 2;
    const asked = Math.max(...tally.retried.map((retry) => retry.retryInS)) * 1000;
    const waitMs = Math.min(MAX_CAMPAIGN_WAIT_MS, Math.max(previous * 2, asked));
    this.holds.set(campaign.id, { until: Date.now() + waitMs, waitMs });
  }

  /** Sends to one recipient; throws BatchStop when the campaign or the number must stop. */
  private async sendOne(
    instance: Instance,
    campaign: Campaign,
    recipient: ClaimedRecipient,
    components: SendComponent[],
    marketing: boolean,
    tally: BatchTally,
  ): Promise<void> {
    const to: Recipient = recipient.to_number
      ? { to: recipient.to_number }
      : { recipient: recipient.user_id! };
    const request = {
      ...to,
      template_name: campaign.template_name,
      language: campaign.template_language,
      ...(components.length > 0 ? { components } : {}),
    };
    const message = buildPlatformMessage('template', request as never);
    const session = this.instances.session(instance);
    let marked = false;
    let wamid: string;
    try {
      wamid = await this.pacer.runCampaign(
        instance.phone_number_id,
        campaign.id,
        campaign.rate_per_s,
        recipient.to_number ?? recipient.user_id!,
        async () => {
          // Marked after the wait, right before the call: from here it is never sent again.
          marked = await this.store.markSending(
            campaign.id,
            recipient.seq,
            this.worker,
            this.config.CAMPAIGN_LEASE_S,
          );
          if (!marked) throw new BatchStop('the campaign stopped, or the recipient is not ours');
          // Marketing goes where the platform delivers it best, when the number is set to
          // (to numbers: that endpoint takes no user ids).
          return instance.marketing_messages && marketing && recipient.to_number
            ? session.sendMarketingMessage(marketingMessage(message))
            : session.sendMessage(message);
        },
        numberRate(instance, this.config.PLATFORM_SEND_RATE),
        this.stopping.signal,
      );
    } catch (error) {
      // Never marked, so never sent: the batch stops and the recipient goes back to the queue.
      if (!marked)
        throw this.stopped || error instanceof BatchStop ? new BatchStop('not sent') : error;
      if (!(error instanceof PlatformError)) throw error;
      await this.failed(instance, campaign, recipient, error, tally);
      return;
    }
    await this.store.markSent(campaign.id, recipient.seq, wamid);
    tally.sent++;
    const record = {
      instanceId: instance.id,
      recipient: to,
      sentBy: 'api' as const,
      unattended: true,
      type: 'template',
      body: { ...request } as Record<string, unknown>,
      wamid,
    };
    // The message went out: with PostgreSQL away its record waits in Redis, as a send's does.
    await this.messages.recordOutbound(record).catch(async (error: unknown) => {
      this.logger.warn(
        { campaignId: campaign.id, wamid, err: (error as Error).message },
        'a campaign send recorded later: the database is away',
      );
      await this.parked.park(record).catch(() => undefined);
    });
  }

  /**
   * A platform refusal: the recipient fails with the code, or (the platform
   * never took it) goes back to the queue while the campaign pauses or the
   * number waits.
   */
  private async failed(
    instance: Instance,
    campaign: Campaign,
    recipient: ClaimedRecipient,
    error: PlatformError,
    tally: BatchTally,
  ): Promise<void> {
    const { failure } = error;
    if (failure.mayHaveBeenSent) {
      await this.store.finish(campaign.id, recipient.seq, 'failed', 'send_uncertain', {
        message: error.message,
      });
      return;
    }
    const pause =
      failure.platformCode === undefined ? undefined : PAUSING_CODES[failure.platformCode];
    const retry = failure.kind !== 'rejected' || pause !== undefined;
    if (pause) {
      await this.store.requeue(campaign.id, recipient.seq);
      if (pause.startsWith('template_')) await this.templates.requestSync(instance);
      await this.pause(campaign, pause);
      throw new BatchStop(pause);
    }
    if (retry) {
      // Not before retry_at, while the rest of the list goes on: one recipient
      // the platform will not take must not hold up the others.
      const retryInS = Math.max(
        failure.retryAfterSeconds ?? 0,
        Math.min(
          MAX_RECIPIENT_WAIT_S,
          (this.config.PLATFORM_RETRY_DELAY_MS / 1000) * 2 ** recipient.attempts,
        ),
      );
      // The recipient's own fault, as far as one can tell: the platform answered, with a
      // code that is not about the number or the platform as a whole.
      const own =
        failure.platformCode !== undefined && !NOT_THE_RECIPIENTS.has(failure.platformCode);
      const message = failure.platformMessage ?? error.message;
      const state = await this.store.requeue(
        campaign.id,
        recipient.seq,
        retryInS,
        own ? { code: failure.platformCode ?? null, message } : null,
        { attempts: MAX_ATTEMPTS, spanS: this.config.CAMPAIGN_RETRY_FOR_S },
      );
      if (state === 'failed') {
        this.logger.warn(
          { campaignId: campaign.id, seq: recipient.seq, code: failure.platformCode },
          'campaign recipient failed: retries exhausted',
        );
      }
      tally.retried.push({
        seq: recipient.seq,
        code: failure.platformCode ?? null,
        message,
        retryInS,
      });
      throw new BatchStop(failure.kind);
    }
    const address = recipient.to_number ?? recipient.user_id;
    if (failure.platformCode === MARKETING_STOPPED_CODE && address) {
      // The customer stopped marketing messages: the next campaigns pass over them.
      await this.contacts.setMarketingPreference(
        instance.id,
        address,
        true,
        new Date(),
        recipient.to_number !== null,
      );
    }
    await this.store.finish(campaign.id, recipient.seq, 'failed', 'platform_rejected', {
      code: failure.platformCode,
      message: failure.platformMessage,
    });
  }

  /** Why the template stops the campaign now, if it does. */
  private templateProblem(
    campaign: Campaign,
    template: CatalogueTemplate | null,
  ): PauseReason | null {
    if (!template) return 'template_not_found';
    if (template.status !== 'APPROVED')
      return TEMPLATE_PAUSES[template.status] ?? 'template_not_approved';
    const category = template.pendingCategory ?? template.category;
    if (campaign.template_category && category && category !== campaign.template_category) {
      return 'template_category_changed';
    }
    return null;
  }

  private async pause(campaign: Campaign, reason: PauseReason): Promise<void> {
    const paused = await this.store.transition(campaign.id, ['running'], 'paused', reason);
    this.states.delete(campaign.id);
    if (paused) this.logger.warn({ campaignId: campaign.id, reason }, 'campaign paused');
  }

  private async stillRunning(id: string): Promise<boolean> {
    const now = Date.now();
    const known = this.states.get(id);
    if (known && now - known.at < STATE_TTL_MS) return known.state === 'running';
    const state = (await this.store.stateOf(id)) ?? 'gone';
    this.states.set(id, { state, at: now });
    return state === 'running';
  }
}
