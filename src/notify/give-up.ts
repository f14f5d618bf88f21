/**
 * GIVE_UP_AFTER counts from an event's first refusal, never from when it happened: an event is dropped only once the
 * service was asked to take it and kept refusing for that long, so what came during an outage, or a backlog the
 * service never saw, is still tried when it answers again.
 */

/** The first refusal of each event of the attempt that was just refused (ids in outbox order); others are forgotten. */
export function firstRefusals(before: ReadonlyMap<number, number>, ids: readonly number[], now: number): Map<number, number> {
  return new Map(ids.map((id) => [id, before.get(id) ?? now]));
}

/** How many of the refused attempt's first events are given up: refused for GIVE_UP_AFTER (a prefix: later events were first refused later). */
export function givenUp(ids: readonly number[], refused: ReadonlyMap<number, number>, now: number, giveUpMs: number): number {
  let n = 0;
  while (n < ids.length && now - (refused.get(ids[n]!) ?? now) >= giveUpMs) n++;
  return n;
}

/**
 * The wait before the next try after `failures` refusals in a row: doubling from `baseMs`, at most `maxMs`, and at most
 * a quarter of GIVE_UP_AFTER, so an event is tried several times before it is given up and the first try after the
 * service is back comes soon.
 */
export function retryWait(failures: number, baseMs: number, maxMs: number, giveUpMs: number): number {
  return Math.max(baseMs, Math.min(maxMs, giveUpMs / 4, baseMs * 2 ** Math.min(20, failures - 1)));
}
