/**
 * The delivery slots of the targets that are not serial (Jellyfin, Emby, Tdarr, a command): each target has
 * `concurrency` of its own, so a target that hangs fills only its own slots and never holds up another.
 */
export class DeliverySlots {
  /** Deliveries in flight to each non-serial target. */
  private readonly busy = new Map<string, number>();

  constructor(private readonly concurrency: number) {}

  /** How many more deliveries `target` may take now. */
  free(target: string): number {
    return Math.max(0, this.concurrency - (this.busy.get(target) ?? 0));
  }

  /** A slot of `target` taken. */
  take(target: string): void {
    this.change(target, 1);
  }

  /** A slot of `target` given back. */
  give(target: string): void {
    this.change(target, -1);
  }

  private change(target: string, by: 1 | -1): void {
    const n = (this.busy.get(target) ?? 0) + by;
    if (n > 0) this.busy.set(target, n);
    else this.busy.delete(target);
  }
}
