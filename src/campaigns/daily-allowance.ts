import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import type { Instance } from '../instances/instance.types.js';
import { CampaignStore } from './campaign.store.js';

/** How long a worker trusts the count it read (sends in between are added to it). */
const COUNT_TTL_MS = 2000;

/**
 * How many more customers a business's campaigns may reach today: its share
 * (CAMPAIGN_DAILY_LIMIT_SHARE) of the daily limit the platform set for the
 * business, less what its campaigns sent in the last 24 hours. The rest of
 * the limit stays for conversations. Counted over the instances of one
 * business account.
 */
@Injectable()
export class DailyAllowance {
  private readonly counts = new Map<string, { sent: number; at: number }>();

  constructor(
    private readonly store: CampaignStore,
    private readonly config: AppConfig,
  ) {}

  /**
   * Infinity when the business has no known limit. `fresh`: as PostgreSQL
   * has it now, without this process's reservations (what a reader is shown).
   */
  async left(instance: Instance, fresh = false): Promise<number> {
    if (instance.daily_limit === null) return Infinity;
    const share = Math.floor(instance.daily_limit * this.config.CAMPAIGN_DAILY_LIMIT_SHARE);
    const sent = fresh
      ? await this.store.sentToday(instance.channel_account_id)
      : await this.sent(instance.channel_account_id);
    return Math.max(0, share - sent);
  }

  /**
   * Counts recipients this process is about to send to until it reads the
   * count again, so its campaigns of one business running side by side do
   * not each spend the same allowance.
   */
  reserve(instance: Instance, sends: number): void {
    const count = this.counts.get(instance.channel_account_id);
    if (count) count.sent += sends;
  }

  private async sent(channelAccountId: string): Promise<number> {
    const cached = this.counts.get(channelAccountId);
    if (cached && Date.now() - cached.at < COUNT_TTL_MS) return cached.sent;
    const sent = await this.store.sentToday(channelAccountId);
    this.counts.set(channelAccountId, { sent, at: Date.now() });
    return sent;
  }
}
