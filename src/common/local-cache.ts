/**
 * A small in-process cache with a time limit per entry and a size cap. Used
 * on request paths for rows that rarely change; changes reach it through
 * CacheInvalidationService, and the time limit bounds staleness if a
 * message is ever missed.
 */
export class LocalCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: string, now = Date.now()): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V, now = Date.now()): void {
    if (this.entries.size >= this.maxEntries) {
      // Oldest first: Map keeps insertion order.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, { value, expires: now + this.ttlMs });
  }

  delete(key: string): void {
    if (key === '*') this.entries.clear();
    else this.entries.delete(key);
  }
}
