/*
 * Every URL a config names (PLEX_LOCAL_URL, JELLYFIN.URL, EMBY.URL, RCLONE.RC_CACHE_REFRESH.RC_URL, the GOOGLE
 * endpoints, and any later key called URL or *_URL) is checked when the config loads: a value the relay cannot
 * call stops the start naming its key, rather than failing each scan later. SERVER_QUEUE_URL is the queue's
 * database, with its own schemes.
 */

type Json = Record<string, unknown>;

/** The scheme a value starts with ("postgress" of "postgress://..."), if it has one. */
function schemeOf(value: string): string | undefined {
  return /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(value)?.[1];
}

/** One line for an http(s) URL key whose value the relay cannot call, else undefined. Empty means unset. */
export function httpUrlProblem(key: string, value: string): string | undefined {
  if (value === '') return undefined;
  const scheme = schemeOf(value);
  if (!scheme) return `${key}: ${JSON.stringify(value)} must start with http:// or https:// (for example http://${value.replace(/^\/+/, '')})`;
  if (!/^https?$/i.test(scheme)) return `${key}: ${JSON.stringify(value)} must start with http:// or https://, not ${scheme}://`;
  try {
    new URL(value);
  } catch {
    return `${key}: ${JSON.stringify(value)} is not a URL (expected http://host:port or https://host:port)`;
  }
  return undefined;
}

/** Every http(s) URL key of a parsed config, by its dotted name, that holds a value the relay cannot call. */
export function urlProblems(config: unknown, prefix = ''): string[] {
  if (!config || typeof config !== 'object' || Array.isArray(config)) return [];
  const out: string[] = [];
  for (const [key, value] of Object.entries(config as Json)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (name === 'SERVER_QUEUE_URL') continue;
    if (typeof value === 'string' && (key === 'URL' || key.endsWith('_URL'))) {
      const problem = httpUrlProblem(name, value);
      if (problem) out.push(problem);
    } else if (value && typeof value === 'object') out.push(...urlProblems(value, name));
  }
  return out;
}

/**
 * SERVER_QUEUE_URL written with a scheme the relay does not know (`postgress://`, `mysql://`): the error names
 * the scheme, rather than a generic format hint (or, from the environment, a hint about JSON quotes).
 */
export function queueUrlSchemeProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const scheme = schemeOf(value);
  if (!scheme || /^postgres(ql)?$/.test(scheme)) return undefined;
  return `SERVER_QUEUE_URL: the scheme "${scheme}://" is not one scanrelay knows; a shared queue is postgres:// or postgresql:// (postgres://user:password@host:port/database), and an empty value keeps the SQLite queue file`;
}
