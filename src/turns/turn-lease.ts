import type { TurnStore } from './turn.store.js';

/**
 * A worker's hold on one turn, renewed in the background at a third of its
 * length. Once a renewal finds the lease gone (the worker stalled and another
 * took the turn over), `held` turns false and the run stops before its next
 * side effect; the store's writes are fenced by the owner as well.
 */
export class TurnLease {
  private lost = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly turnId: string,
    readonly owner: string,
    store: TurnStore,
    leaseMs: number,
  ) {
    this.timer = setInterval(() => {
      store.renew(turnId, owner, leaseMs).then(
        (renewed) => {
          if (!renewed) this.lost = true;
        },
        // The database is away: the lease may run out, and the fenced writes will tell.
        () => undefined,
      );
    }, leaseMs / 3);
    this.timer.unref();
  }

  get held(): boolean {
    return !this.lost;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
