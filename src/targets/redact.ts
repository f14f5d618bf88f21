import type { AfterDelivery, DeliveryResult, Target, TargetSections } from '../core/scan.ts';
import type { Logger } from '../core/logger.ts';
import { redactSecrets } from './http.ts';

/*
 * A server that echoes its request (a debugging proxy, a Plex or Jellyfin error page that quotes the URL or the
 * headers) would put the target's token into an error text, and from there into the log, the queue's history,
 * the dashboard and `scanrelay queue`. Every target is built behind one redaction of its own secrets
 * (registry.ts): its results, its thrown errors and its log lines.
 */

/** Config keys whose values are credentials: TOKEN, API_KEY, PASSWORD, SECRET (any case, any prefix). */
const SECRET_KEY = /TOKEN|API_?KEY|PASSWORD|SECRET/i;

/**
 * The secrets of one TARGETS entry: its credential keys, every REQUEST.HEADERS value (a header there is usually
 * an Authorization), the password in its URL, and the Basic-auth pair (USERNAME:PASSWORD) as a header carries it.
 */
export function targetSecrets(entry: Record<string, unknown>): string[] {
  const out: string[] = [];
  const walk = (value: unknown, key: string, depth: number) => {
    if (typeof value === 'string') {
      if (SECRET_KEY.test(key)) out.push(value);
      return;
    }
    if (!value || typeof value !== 'object' || depth > 3) return;
    for (const [k, v] of Object.entries(value)) walk(v, k, depth + 1);
  };
  walk(entry, '', 0);
  const headers = (entry.REQUEST as { HEADERS?: Record<string, string> } | undefined)?.HEADERS ?? {};
  for (const v of Object.values(headers)) {
    out.push(v);
    // "Bearer abc", "Basic dXNlcjpwYXNz": the credential after the scheme, on its own too.
    const m = /^\S+\s+(\S.*)$/.exec(v);
    if (m) out.push(m[1]!);
  }
  if (typeof entry.URL === 'string') {
    try {
      const u = new URL(entry.URL);
      if (u.password) out.push(decodeURIComponent(u.password));
      for (const [k, v] of u.searchParams) if (SECRET_KEY.test(k) && v) out.push(v);
    } catch {
      // Not a URL: the target itself says so.
    }
  }
  if (typeof entry.USERNAME === 'string' && typeof entry.PASSWORD === 'string') out.push(`${entry.USERNAME}:${entry.PASSWORD}`);
  // A secret of one or two characters would blank out ordinary words: too short to hide, and too short to matter.
  return [...new Set(out.filter((s) => s.length >= 3))];
}

/** A text with every secret taken out, in each form it may be echoed in (redactSecrets: raw, URL-encoded, base64). */
export type Redact = (text: string) => string;

export function redactorFor(secrets: readonly string[]): Redact {
  if (secrets.length === 0) return (text) => text;
  return (text) => redactSecrets(text, secrets);
}

function redactError(err: unknown, redact: Redact): unknown {
  if (!(err instanceof Error)) return typeof err === 'string' ? redact(err) : err;
  const message = redact(err.message);
  const stack = err.stack === undefined ? undefined : redact(err.stack);
  if (message === err.message && stack === err.stack) return err;
  // The same class (TargetError's kind and status stay): the scheduler and the HTTP answers read them.
  const copy = Object.assign(Object.create(Object.getPrototypeOf(err) as object) as Error, err, { message });
  if (stack !== undefined) copy.stack = stack;
  return copy;
}

function redactResult(result: DeliveryResult, redact: Redact): DeliveryResult {
  if (result.outcome === 'done') {
    const after = result.after;
    return {
      ...result,
      ...(result.detail !== undefined ? { detail: redact(result.detail) } : {}),
      ...(after ? { after: redactAfter(after, redact) } : {}),
    };
  }
  return { ...result, error: redact(result.error) };
}

function redactAfter(after: AfterDelivery, redact: Redact): AfterDelivery {
  return async (signal) => {
    try {
      const out = await after(signal);
      if (typeof out === 'string') return redact(out);
      const items = out.items;
      return {
        ...out,
        detail: redact(out.detail),
        ...(items ? { items: (s: AbortSignal) => items(s).catch((err: unknown) => Promise.reject(redactError(err, redact))) } : {}),
      };
    } catch (err) {
      throw redactError(err, redact);
    }
  };
}

/** `fn`'s answer, and what it throws, through the redaction. */
async function guarded<T>(fn: () => Promise<T>, redact: Redact, map: (value: T) => T = (v) => v): Promise<T> {
  try {
    return map(await fn());
  } catch (err) {
    throw redactError(err, redact);
  }
}

/**
 * The target with every text it hands out passed through `redact`: delivery results (and their after-steps),
 * the availability check, the set-up check, its description's URL, and the errors its other calls throw (a
 * section look-up's among them). Changed in place, so a Plex target keeps its class (targets/plex checks it).
 */
export function redactTargetErrors<T extends Target>(target: T, redact: Redact): T {
  target.redact = redact;
  const deliver = target.deliver.bind(target);
  target.deliver = (item) => guarded(() => deliver(item), redact, (r) => redactResult(r, redact));
  if (target.deliverMany) {
    const many = target.deliverMany.bind(target);
    target.deliverMany = (items) => guarded(() => many(items), redact, (rs) => rs.map((r) => redactResult(r, redact)));
  }
  const available = target.available.bind(target);
  target.available = () =>
    guarded(available, redact, (a) => ({ ...a, ...(a.error !== undefined ? { error: redact(a.error) } : {}), ...(a.note !== undefined ? { note: redact(a.note) } : {}) }));
  if (target.scanning) {
    const scanning = target.scanning.bind(target);
    target.scanning = () => guarded(scanning, redact);
  }
  if (target.identity) {
    const identity = target.identity.bind(target);
    target.identity = () => guarded(identity, redact);
  }
  if (target.libraryRoots) {
    const roots = target.libraryRoots.bind(target);
    target.libraryRoots = (fresh) => guarded(() => roots(fresh), redact);
  }
  if (target.describe) {
    // A URL may carry a password (https://user:pass@host): the description is shown by the CLI and the dashboard.
    const describe = target.describe.bind(target);
    target.describe = () => {
      const d = describe();
      return d.url === undefined ? d : { ...d, url: redact(d.url) };
    };
  }
  if (target.sections) {
    const find = target.sections.find.bind(target.sections);
    (target as { sections: TargetSections }).sections = { find: (folder) => guarded(() => find(folder), redact) };
  }
  if (target.setupProblems) {
    // The set-up check asks the server: an echoed answer in a message must not carry the token.
    const problems = target.setupProblems.bind(target);
    target.setupProblems = () => guarded(problems, redact, (ps) => ps.map((p) => ({ ...p, message: redact(p.message) })));
  }
  return target;
}

const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);

function redactValue(value: unknown, redact: Redact, depth: number): unknown {
  if (typeof value === 'string') return redact(value);
  if (value instanceof Error) return redactError(value, redact);
  if (!value || typeof value !== 'object' || depth > 3) return value;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, redact, depth + 1));
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactValue(v, redact, depth + 1)]));
}

/** The target's logger, its lines (message and fields, an error's message and stack) through `redact`. */
export function redactingLogger(log: Logger, redact: Redact): Logger {
  return new Proxy(log, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (typeof prop === 'string' && LEVELS.has(prop)) {
        return (...args: unknown[]) => (value as (...a: unknown[]) => void).apply(target, args.map((a) => redactValue(a, redact, 0)));
      }
      if (prop === 'child') return (...args: unknown[]) => redactingLogger((value as (...a: unknown[]) => Logger).apply(target, args), redact);
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
}
