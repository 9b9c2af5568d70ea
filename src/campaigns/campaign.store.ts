import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { TimeIdPosition } from '../common/time-id-cursor.js';
import { epochMicros, rows } from '../database/sql.js';
import type {
  Campaign,
  CampaignProgress,
  CampaignRecipient,
  CampaignState,
  NewRecipient,
  RecipientState,
} from './campaign.types.js';

/** Recipients written per INSERT when a campaign is created. */
const INSERT_CHUNK = 5000;

/** A new campaign's fields. */
export interface NewCampaign {
  instanceId: string;
  name: string;
  templateId: string;
  templateName: string;
  templateLanguage: string;
  templateCategory: string | null;
  components: unknown[];
  startAt: Date | null;
  ratePerS: number | null;
  duplicates: number;
  invalid: number;
}

/** A recipient a worker took, to send to. */
export type ClaimedRecipient = Pick<
  CampaignRecipient,
  'campaign_id' | 'seq' | 'to_number' | 'user_id' | 'parameters' | 'attempts'
>;

/** The only home of SQL on `campaigns` and `campaign_recipients`. */
@Injectable()
export class CampaignStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The campaign and its recipients, in one transaction (numbered in the order given). */
  async create(campaign: NewCampaign, recipients: NewRecipient[]): Promise<Campaign> {
    return this.db.transaction(async (manager) => {
      const created = await this.insertCampaign(manager, campaign, recipients.length);
      for (let from = 0; from < recipients.length; from += INSERT_CHUNK) {
        await this.insertRecipients(
          manager,
          created.id,
          from,
          recipients.slice(from, from + INSERT_CHUNK),
        );
      }
      return created;
    });
  }

  /**
   * The campaign and its recipients as they come, in one transaction: a
   * recipient already in the list (the table's unique addresses) is left out.
   * `finish` is given how many were kept and answers the counts left out;
   * it may throw, and nothing is kept.
   */
  async createStreamed(
    campaign: Omit<NewCampaign, 'duplicates' | 'invalid'>,
    batches: AsyncIterable<NewRecipient[]> | Iterable<NewRecipient[]>,
    finish: (kept: number) => { duplicates: number; invalid: number },
  ): Promise<Campaign> {
    return this.db.transaction(async (manager) => {
      // The list first, its campaign's row last: the row's creation event
      // (its trigger) then carries the counts. The reference waits for the commit.
      await manager.query('SET CONSTRAINTS campaign_recipients_campaign_id_fkey DEFERRED');
      const id = randomUUID();
      let seq = 0;
      let kept = 0;
      for await (const batch of batches) {
        kept += await this.insertRecipients(manager, id, seq, batch);
        seq += batch.length;
      }
      return this.insertCampaign(manager, { ...campaign, ...finish(kept) }, kept, id);
    });
  }

  private async insertCampaign(
    manager: EntityManager,
    campaign: NewCampaign,
    recipients: number,
    id: string = randomUUID(),
  ): Promise<Campaign> {
    const [created] = await rows<Campaign>(
      manager,
      `INSERT INTO campaigns (instance_id, name, template_id, template_name, template_language,
         template_category, components, start_at, rate_per_s, recipients, duplicates, invalid, id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING *`,
      [
        campaign.instanceId,
        campaign.name,
        campaign.templateId,
        campaign.templateName,
        campaign.templateLanguage,
        campaign.templateCategory,
        JSON.stringify(campaign.components),
        campaign.startAt,
        campaign.ratePerS,
        recipients,
        campaign.duplicates,
        campaign.invalid,
        id,
      ],
    );
    return created;
  }

  /** Writes recipients numbered from `from` on; how many were new to the list. */
  private async insertRecipients(
    manager: EntityManager,
    campaignId: string,
    from: number,
    recipients: NewRecipient[],
  ): Promise<number> {
    const [{ count }] = await rows<{ count: number }>(
      manager,
      `WITH kept AS (
         INSERT INTO campaign_recipients (campaign_id, seq, to_number, user_id, parameters)
         SELECT $1, $2 + r.n, r.to_number, r.user_id, r.parameters
         FROM ROWS FROM (jsonb_to_recordset($3::jsonb)
           AS (to_number text, user_id text, parameters jsonb))
           WITH ORDINALITY AS r(to_number, user_id, parameters, n)
         ON CONFLICT DO NOTHING RETURNING 1)
       SELECT count(*)::int AS count FROM kept`,
      [
        campaignId,
        from,
        JSON.stringify(
          recipients.map((recipient) => ({
            to_number: recipient.to ?? null,
            user_id: recipient.recipient ?? null,
            parameters: recipient.parameters ?? null,
          })),
        ),
      ],
    );
    return count;
  }

  /**
   * How many recipients the campaigns of a business account's instances were
   * sent to in the last 24 hours (campaigns that ended longer ago than that
   * are not read).
   */
  async sentToday(channelAccountId: string): Promise<number> {
    const [{ n }] = await rows<{ n: number }>(
      this.db,
      `SELECT count(*)::int AS n
       FROM campaigns c
       JOIN instances i ON i.id = c.instance_id
       JOIN campaign_recipients r ON r.campaign_id = c.id
         AND r.sent_at > now() - interval '24 hours'
       WHERE i.channel_account_id = $1 AND c.state <> 'draft'
         AND (c.finished_at IS NULL OR c.finished_at > now() - interval '24 hours')`,
      [channelAccountId],
    );
    return n;
  }

  /** The campaign a sent message belongs to, by its wamid; null when none sent it. */
  async sentWith(wamid: string): Promise<Pick<Campaign, 'id' | 'name'> | null> {
    const [found] = await rows<Pick<Campaign, 'id' | 'name'>>(
      this.db,
      `SELECT c.id, c.name FROM campaign_recipients r JOIN campaigns c ON c.id = r.campaign_id
       WHERE r.wamid = $1 LIMIT 1`,
      [wamid],
    );
    return found ?? null;
  }

  async get(id: string, instanceId?: string): Promise<Campaign | null> {
    const [found] = await rows<Campaign>(
      this.db,
      `SELECT * FROM campaigns WHERE id = $1 AND ($2::uuid IS NULL OR instance_id = $2)`,
      [id, instanceId ?? null],
    );
    return found ?? null;
  }

  /** An instance's campaigns, newest first, after (created_at, id); `position` is created_at in µs. */
  list(
    instanceId: string,
    after: TimeIdPosition | null,
    limit: number,
  ): Promise<Array<Campaign & { position: string }>> {
    return rows(
      this.db,
      `SELECT *, ${epochMicros('created_at')} AS position
       FROM campaigns WHERE instance_id = $1
         AND ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::uuid))
       ORDER BY created_at DESC, id DESC LIMIT $4`,
      [instanceId, after?.at ?? null, after?.id ?? null, limit],
    );
  }

  /**
   * Moves a campaign from one of `from` to `to` (`reason` when it pauses);
   * null when it is in none of them. The trigger writes its event.
   */
  async transition(
    id: string,
    from: readonly CampaignState[],
    to: CampaignState,
    reason: string | null = null,
  ): Promise<Campaign | null> {
    if (to === 'cancelled') return this.cancel(id, from);
    const [moved] = await rows<Campaign>(
      this.db,
      `UPDATE campaigns SET state = $3::text, pause_reason = $4, updated_at = now(),
         started_at = CASE WHEN $3::text = 'running' THEN COALESCE(started_at, now())
           ELSE started_at END,
         finished_at = CASE WHEN $3::text IN ('completed', 'cancelled') THEN now()
           ELSE finished_at END
       WHERE id = $1 AND state = ANY($2::text[]) RETURNING *`,
      [id, from, to, to === 'paused' ? reason : null],
    );
    return moved ?? null;
  }

  /**
   * Cancels the campaign and skips (`cancelled`) whoever was not sent to yet,
   * in one transaction, before the state changes: its event counts them.
   */
  private cancel(id: string, from: readonly CampaignState[]): Promise<Campaign | null> {
    return this.db.transaction(async (manager) => {
      const [found] = await rows<{ id: string }>(
        manager,
        `SELECT id FROM campaigns WHERE id = $1 AND state = ANY($2::text[]) FOR UPDATE`,
        [id, from],
      );
      if (!found) return null;
      await manager.query(
        `UPDATE campaign_recipients SET state = 'skipped', reason = 'cancelled', worker = NULL,
           lease_until = NULL
         WHERE campaign_id = $1 AND state IN ('queued', 'claimed')`,
        [id],
      );
      const [cancelled] = await rows<Campaign>(
        manager,
        `UPDATE campaigns SET state = 'cancelled', pause_reason = NULL, updated_at = now(),
           finished_at = now()
         WHERE id = $1 RETURNING *`,
        [id],
      );
      return cancelled;
    });
  }

  /**
   * Resumes a paused campaign, taking the template's category as it is now
   * (an announced one first) as the one it was confirmed for.
   */
  async resume(id: string, to: CampaignState): Promise<Campaign | null> {
    const [moved] = await rows<Campaign>(
      this.db,
      `UPDATE campaigns c SET state = $2::text, pause_reason = NULL, updated_at = now(),
         started_at = CASE WHEN $2::text = 'running' THEN COALESCE(started_at, now())
           ELSE started_at END,
         template_category = COALESCE(
           (SELECT COALESCE(t.pending_category, t.category) FROM templates t
            WHERE t.template_id = c.template_id), c.template_category)
       WHERE c.id = $1 AND c.state = 'paused' RETURNING c.*`,
      [id, to],
    );
    return moved ?? null;
  }

  /** Scheduled campaigns whose time has come start running. */
  async startDue(): Promise<number> {
    const started = await rows<{ id: string }>(
      this.db,
      `UPDATE campaigns SET state = 'running', updated_at = now(),
         started_at = COALESCE(started_at, now())
       WHERE state = 'scheduled' AND (start_at IS NULL OR start_at <= now()) RETURNING id`,
    );
    return started.length;
  }

  /** The running campaigns, those with the fewest recent sends first. */
  running(): Promise<Campaign[]> {
    return rows(this.db, `SELECT * FROM campaigns WHERE state = 'running' ORDER BY updated_at`);
  }

  /** A campaign's state now (the workers read it between sends). */
  async stateOf(id: string): Promise<CampaignState | null> {
    const [found] = await rows<{ state: CampaignState }>(
      this.db,
      `SELECT state FROM campaigns WHERE id = $1`,
      [id],
    );
    return found?.state ?? null;
  }

  /**
   * Takes up to `limit` queued recipients, in order, for `worker` until the
   * lease ends; recipients another worker holds are passed over.
   */
  claim(
    campaignId: string,
    worker: string,
    limit: number,
    leaseS: number,
  ): Promise<ClaimedRecipient[]> {
    return rows(
      this.db,
      // The CTE is read once: a subquery joined in FROM may be scanned again per row
      // (a nested loop), each scan passing over the rows just taken to lock the next ones.
      `WITH q AS MATERIALIZED (
         SELECT seq FROM campaign_recipients
         WHERE campaign_id = $1 AND state = 'queued'
           AND (retry_at IS NULL OR retry_at <= now())
         ORDER BY seq LIMIT $3 FOR UPDATE SKIP LOCKED)
       UPDATE campaign_recipients r SET state = 'claimed', worker = $2,
         lease_until = now() + make_interval(secs => $4)
       FROM q
       WHERE r.campaign_id = $1 AND r.seq = q.seq
       RETURNING r.campaign_id, r.seq, r.to_number, r.user_id, r.parameters, r.attempts`,
      [campaignId, worker, limit, leaseS],
    );
  }

  /**
   * The step before the platform call: true when the recipient is still
   * this worker's to send. From here on it is never sent again: a worker
   * that dies before `sent` leaves it `sending`, which ends `failed`.
   */
  async markSending(
    campaignId: string,
    seq: number,
    worker: string,
    leaseS: number,
  ): Promise<boolean> {
    const marked = await rows<{ seq: number }>(
      this.db,
      // Only while the campaign runs: a pause or cancel stops a send still waiting for its slot.
      `UPDATE campaign_recipients SET state = 'sending',
         lease_until = now() + make_interval(secs => $4)
       WHERE campaign_id = $1 AND seq = $2 AND state = 'claimed' AND worker = $3
         AND EXISTS (SELECT 1 FROM campaigns WHERE id = $1 AND state = 'running')
       RETURNING seq`,
      [campaignId, seq, worker, leaseS],
    );
    return marked.length === 1;
  }

  /**
   * The platform took it. Also over a `send_uncertain` the lease's end wrote
   * meanwhile (a call slower than the lease): it was sent after all.
   */
  async markSent(campaignId: string, seq: number, wamid: string): Promise<void> {
    await this.db.query(
      `UPDATE campaign_recipients SET state = 'sent', wamid = $3, sent_at = now(), reason = NULL,
         error_message = NULL, worker = NULL, lease_until = NULL
       WHERE campaign_id = $1 AND seq = $2
         AND (state = 'sending' OR (state = 'failed' AND reason = 'send_uncertain'))`,
      [campaignId, seq, wamid],
    );
  }

  /** A recipient not sent to, for good: `failed` (with the platform's code) or `skipped`. */
  async finish(
    campaignId: string,
    seq: number,
    state: Extract<RecipientState, 'failed' | 'skipped'>,
    reason: string,
    error: { code?: number; message?: string } = {},
  ): Promise<void> {
    await this.db.query(
      `UPDATE campaign_recipients SET state = $3, reason = $4, error_code = $5,
         error_message = $6, worker = NULL, lease_until = NULL
       WHERE campaign_id = $1 AND seq = $2 AND state IN ('claimed', 'sending')`,
      [campaignId, seq, state, reason, error.code ?? null, error.message ?? null],
    );
  }

  /**
   * Puts back a recipient the platform did not take (throttled, unavailable,
   * or the campaign paused itself), not to be sent before `retryInS`. A try
   * that `counts` (the recipient's fault, as far as one can tell) is added
   * to its attempts, in the same statement; at `limit.attempts` of them, the
   * first at least `limit.spanS` ago, it ends failed (`retries_exhausted`,
   * with the platform's last code). Its state now.
   */
  async requeue(
    campaignId: string,
    seq: number,
    retryInS = 0,
    counts: { code: number | null; message: string | null } | null = null,
    limit: { attempts: number; spanS: number } = { attempts: 0, spanS: 0 },
  ): Promise<RecipientState | null> {
    const [row] = await rows<{ state: RecipientState }>(
      this.db,
      `WITH r AS (
         SELECT seq, attempts + 1 >= $5 AND COALESCE(first_failed_at, now())
             <= now() - make_interval(secs => $6::float8) AS exhausted
         FROM campaign_recipients
         WHERE campaign_id = $1 AND seq = $2 AND state = 'sending')
       UPDATE campaign_recipients c SET worker = NULL, lease_until = NULL,
         attempts = c.attempts + CASE WHEN $4 THEN 1 ELSE 0 END,
         first_failed_at = CASE WHEN $4 THEN COALESCE(c.first_failed_at, now())
           ELSE c.first_failed_at END,
         state = CASE WHEN $4 AND r.exhausted THEN 'failed' ELSE 'queued' END,
         reason = CASE WHEN $4 AND r.exhausted THEN 'retries_exhausted' ELSE c.reason END,
         error_code = CASE WHEN $4 AND r.exhausted THEN $7 ELSE c.error_code END,
         error_message = CASE WHEN $4 AND r.exhausted THEN $8 ELSE c.error_message END,
         retry_at = CASE WHEN $4 AND r.exhausted THEN NULL
           WHEN $3::float8 > 0 THEN now() + make_interval(secs => $3::float8) END
       FROM r
       WHERE c.campaign_id = $1 AND c.seq = r.seq
       RETURNING c.state`,
      [
        campaignId,
        seq,
        retryInS,
        counts !== null,
        limit.attempts,
        limit.spanS,
        counts?.code ?? null,
        counts?.message ?? null,
      ],
    );
    return row?.state ?? null;
  }

  /** Gives back what a worker claimed and did not send (the platform never had it). */
  async release(campaignId: string, seqs: number[], worker: string): Promise<void> {
    if (seqs.length === 0) return;
    await this.db.query(
      `UPDATE campaign_recipients SET state = 'queued', worker = NULL, lease_until = NULL
       WHERE campaign_id = $1 AND seq = ANY($2::int[]) AND state = 'claimed' AND worker = $3`,
      [campaignId, seqs, worker],
    );
  }

  /**
   * After a worker died: what it claimed goes back to the queue; what it was
   * sending (the platform may have it) ends `failed`, `send_uncertain`,
   * never sent again. The counts.
   */
  async recoverExpired(): Promise<{ requeued: number; uncertain: number }> {
    const requeued = await rows<{ seq: number }>(
      this.db,
      `UPDATE campaign_recipients SET state = 'queued', worker = NULL, lease_until = NULL
       WHERE state = 'claimed' AND lease_until < now() RETURNING seq`,
    );
    const uncertain = await rows<{ seq: number }>(
      this.db,
      `UPDATE campaign_recipients SET state = 'failed', reason = 'send_uncertain',
         error_message = 'the worker stopped during the platform call: the message may have been sent, so it is not sent again',
         worker = NULL, lease_until = NULL
       WHERE state = 'sending' AND lease_until < now() RETURNING seq`,
    );
    return { requeued: requeued.length, uncertain: uncertain.length };
  }

  /** A running campaign with nobody left to send to becomes completed; the campaign, if so. */
  async completeIfDone(id: string): Promise<Campaign | null> {
    const [done] = await rows<Campaign>(
      this.db,
      `UPDATE campaigns SET state = 'completed', updated_at = now(), finished_at = now()
       WHERE id = $1 AND state = 'running' AND NOT EXISTS (
         SELECT 1 FROM campaign_recipients
         WHERE campaign_id = $1 AND state IN ('queued', 'claimed', 'sending'))
       RETURNING *`,
      [id],
    );
    return done ?? null;
  }

  /** Marks that the campaign just sent (the runner serves the least recent first). */
  async touch(id: string): Promise<void> {
    await this.db.query(`UPDATE campaigns SET updated_at = now() WHERE id = $1`, [id]);
  }

  /** What the campaign came to: recipient states, and the platform's statuses of what was sent. */
  async progress(campaign: Pick<Campaign, 'id' | 'instance_id'>): Promise<CampaignProgress> {
    const groups = await rows<{
      state: RecipientState;
      reason: string | null;
      code: string | null;
      status: string | null;
      replied: boolean;
      n: number;
    }>(
      this.db,
      `SELECT r.state, r.reason, COALESCE(r.error_code::text, m.errors->0->>'code') AS code,
         m.status,
         (r.state = 'sent' AND EXISTS (
           SELECT 1 FROM messages i WHERE i.contact_id = m.contact_id
             AND i.direction = 'inbound' AND i.created_at > r.sent_at)) AS replied,
         count(*)::int AS n
       FROM campaign_recipients r
       LEFT JOIN messages m ON r.wamid IS NOT NULL AND m.wamid = r.wamid
         AND m.instance_id = $2
       WHERE r.campaign_id = $1
       GROUP BY 1, 2, 3, 4, 5`,
      [campaign.id, campaign.instance_id],
    );
    const progress: CampaignProgress = {
      queued: 0,
      sending: 0,
      sent: 0,
      failed: 0,
      skipped: 0,
      delivered: 0,
      read: 0,
      replied: 0,
      failed_by_code: {},
      skipped_by_reason: {},
    };
    const add = (record: Record<string, number>, key: string, n: number) => {
      record[key] = (record[key] ?? 0) + n;
    };
    for (const group of groups) {
      const n = group.n;
      if (group.state === 'queued' || group.state === 'claimed') progress.queued += n;
      else if (group.state === 'sending') progress.sending += n;
      else if (group.state === 'skipped') {
        progress.skipped += n;
        add(progress.skipped_by_reason, group.reason ?? 'unknown', n);
      } else if (group.state === 'failed' || group.status === 'failed') {
        // Sent, then the platform said it failed (131049, 131026…): a failure with its code.
        progress.failed += n;
        add(progress.failed_by_code, group.code ?? group.reason ?? 'unknown', n);
      } else {
        progress.sent += n;
        if (group.status === 'delivered' || group.status === 'read') progress.delivered += n;
        if (group.status === 'read') progress.read += n;
        if (group.replied) progress.replied += n;
      }
    }
    return progress;
  }

  /** A page of a campaign's recipients in list order, after `afterSeq`, optionally in one state. */
  recipients(
    campaignId: string,
    state: RecipientState | null,
    afterSeq: number,
    limit: number,
  ): Promise<CampaignRecipient[]> {
    // A send the platform later reported failed is a failure with its code, as progress counts it.
    return rows(
      this.db,
      `SELECT * FROM (
         SELECT r.campaign_id, r.seq, r.to_number, r.user_id, r.parameters,
           CASE WHEN r.state = 'sent' AND m.status = 'failed' THEN 'failed' ELSE r.state END AS state,
           r.reason,
           COALESCE(r.error_code, CASE WHEN m.status = 'failed'
             AND (m.errors->0->>'code') ~ '^[0-9]{1,9}$' THEN (m.errors->0->>'code')::int END)
             AS error_code,
           COALESCE(r.error_message, CASE WHEN m.status = 'failed'
             THEN m.errors->0->>'title' END) AS error_message,
           r.wamid, r.sent_at, r.attempts, r.retry_at, m.status AS delivery
         FROM campaign_recipients r
         LEFT JOIN messages m ON r.wamid IS NOT NULL AND m.wamid = r.wamid
         WHERE r.campaign_id = $1 AND r.seq > $3) x
       WHERE $2::text IS NULL OR x.state = $2 OR ($2 = 'queued' AND x.state = 'claimed')
       ORDER BY x.seq LIMIT $4`,
      [campaignId, state, afterSeq, limit],
    );
  }
}
