/**
 * `load` run at the first call, its promise shared by every later call. A plugin declares its routes at start and
 * loads the code that answers them with the first request that needs it: node keeps the source of every module it
 * loads, so a relay whose dashboard nobody opens does not hold the dashboard's (bench/README.md "Memory").
 * `started()` is that promise once a call made it, for a close that has something to close only then.
 */
export function onFirstUse<T>(load: () => Promise<T>): (() => Promise<T>) & { started: () => Promise<T> | undefined } {
  let started: Promise<T> | undefined;
  return Object.assign(() => (started ??= load()), { started: () => started });
}
