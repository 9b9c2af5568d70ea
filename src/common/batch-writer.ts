import { setTimeout as sleep } from 'node:timers/promises';

/** Most rows one statement carries (PostgreSQL allows 65535 parameters). */
const MAX_BATCH = 500;

interface Pending<T> {
  item: T;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Gathers the writes made in the same event-loop turn into one call of
 * `flush`, and settles each caller's promise when that call does: callers
 * still wait for their own row to be durable, with one round trip for many.
 * A failed flush is tried again after each of `retryDelaysMs` before its
 * callers see the error (a database blip should not cost a write).
 */
export class BatchWriter<T> {
  private pending: Array<Pending<T>> = [];
  private scheduled = false;

  constructor(
    private readonly flush: (items: T[]) => Promise<void>,
    private readonly retryDelaysMs: readonly number[] = [],
  ) {}

  write(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.drain());
      }
    });
  }

  private drain(): void {
    this.scheduled = false;
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, MAX_BATCH);
      // Batches run side by side; each settles only its own callers.
      void this.flushWithRetries(batch.map((entry) => entry.item)).then(
        () => batch.forEach((entry) => entry.resolve()),
        (error: unknown) => batch.forEach((entry) => entry.reject(error)),
      );
    }
  }

  private async flushWithRetries(items: T[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.flush(items);
        return;
      } catch (error) {
        if (attempt >= this.retryDelaysMs.length) throw error;
        await sleep(this.retryDelaysMs[attempt]);
      }
    }
  }
}
