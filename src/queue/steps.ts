/**
 * A queue rule written once as a generator of steps, each a call on the store's IO (its own SQL): SQLite answers
 * at once (runSync, inside its transaction), PostgreSQL with promises (runAsync, inside its transaction). The rule
 * never knows which store it drives; the dialect never decides anything.
 */
type Awaitable<T> = T | Promise<T>;

export type Step<IO> = (io: IO) => unknown;
export type Steps<IO, T> = Generator<Step<IO>, T, unknown>;

/** One call on the store's IO, as a step whose answer the rule reads. */
export function* step<IO, R>(f: (io: IO) => Awaitable<R>): Steps<IO, R> {
  return (yield f) as R;
}

/** Runs the steps on a synchronous store (SQLite, inside its transaction). */
export function runSync<IO, T>(steps: Steps<IO, T>, io: IO): T {
  let r = steps.next();
  while (!r.done) r = steps.next(r.value(io));
  return r.value;
}

/** Runs the steps on an asynchronous store (PostgreSQL, inside its transaction). */
export async function runAsync<IO, T>(steps: Steps<IO, T>, io: IO): Promise<T> {
  let r = steps.next();
  while (!r.done) r = steps.next(await r.value(io));
  return r.value;
}
