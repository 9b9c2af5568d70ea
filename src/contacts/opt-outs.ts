import { Injectable } from '@nestjs/common';
import { WINDOW_TOPIC } from '../common/cache-topics.js';
import { CacheInvalidationService } from '../redis/cache-invalidation.service.js';
import { ContactStore } from './contact.store.js';

/** Opting contacts out (a stop word) and back in (a start word, or an admin). */
@Injectable()
export class OptOuts {
  constructor(
    private readonly store: ContactStore,
    private readonly invalidation: CacheInvalidationService,
  ) {}

  /**
   * Opts contacts out or back in (ContactStore.setOptOut); then every process
   * forgets what it knew of the windows of those that changed (MessagesService
   * caches them by address). The keys of those that changed.
   */
  async set(contactIds: string[], optedOut: boolean): ReturnType<ContactStore['setOptOut']> {
    const changed = await this.store.setOptOut(contactIds, optedOut);
    for (const contact of changed) {
      for (const address of [contact.wa_id, contact.user_id]) {
        if (address)
          await this.invalidation.invalidate(WINDOW_TOPIC, `${contact.instance_id}:${address}`);
      }
    }
    return changed;
  }
}
