import type { CompleteResult, Completion } from './backend.ts';

interface Waiting {
  completion: Completion;
  resolve: (r: CompleteResult) => void;
  reject: (e: unknown) => void;
}

/**
 * Group commit for deliveries' outcomes on a store whose commits block the event loop (SQLite: each one an
 * fsync). The outcomes that end in the same turn of the event loop share one commit; an urgent one (a serial
 * target's, whose turn waits on it) commits at once and takes those waiting with it. Each caller's promise
 * resolves only once its outcome is on disk, as a commit of its own would.
 */
export class CompletionBatch {
  private waiting: Waiting[] = [];
  private scheduled = false;

  constructor(private readonly commit: (completions: readonly Completion[]) => CompleteResult[]) {}

  add(completion: Completion, urgent = false): Promise<CompleteResult> {
    const done = new Promise<CompleteResult>((resolve, reject) => this.waiting.push({ completion, resolve, reject }));
    if (urgent) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    return done;
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.waiting;
    this.waiting = [];
    if (batch.length === 0) return;
    try {
      const results = this.commit(batch.map((w) => w.completion));
      batch.forEach((w, i) => w.resolve(results[i]!));
    } catch (err) {
      // Nothing of the group was written. Alone, each outcome gets its own answer: one the store refuses must not
      // cost its neighbours theirs (a full disk or a locked file fails them all alike, as before).
      if (batch.length === 1) return batch[0]!.reject(err);
      for (const w of batch) {
        try {
          w.resolve(this.commit([w.completion])[0]!);
        } catch (one) {
          w.reject(one);
        }
      }
    }
  }
}
