/**
 * A list a target reads from its service (Sonarr's series, a server's libraries), kept for `maxAgeMs` so a
 * burst of scans asks once, and read again when what is sought is not in it (a series added since), as the
 * Plex section cache does. Readers that arrive while a read is under way share it.
 */
export class CachedList<T> {
  private value: { items: T[]; at: number } | undefined;
  private inflight: Promise<T[]> | undefined;

  constructor(
    private readonly read: () => Promise<T[]>,
    private readonly maxAgeMs = 60_000,
  ) {}

  async get(fresh = false): Promise<T[]> {
    if (!fresh && this.value && Date.now() - this.value.at < this.maxAgeMs) return this.value.items;
    if (!this.inflight) {
      this.inflight = this.read()
        .then((items) => {
          this.value = { items, at: Date.now() };
          return items;
        })
        .finally(() => (this.inflight = undefined));
    }
    return this.inflight;
  }

  /**
   * `pick` over the list; when it finds nothing in a list read earlier, the list is read again and `pick` tried
   * once more. Returns what was found (or undefined) and the list it was sought in.
   */
  async find<R>(pick: (items: T[]) => R | undefined): Promise<{ found: R | undefined; items: T[] }> {
    const cached = this.value !== undefined && Date.now() - this.value.at < this.maxAgeMs;
    let items = await this.get();
    let found = pick(items);
    if (found === undefined && cached) {
      items = await this.get(true);
      found = pick(items);
    }
    return { found, items };
  }
}
