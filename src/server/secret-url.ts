import { DEFAULT_MAX_PARAM_LENGTH } from '../config/loose.ts';

/*
 * Any SERVER_PASS that plex_autoscan served works here. Flask routes "/<SERVER_PASS>" and
 * "/api/<SERVER_PASS>" as literal paths (scan.py:242,279,313) and matches them against the decoded path,
 * so a secret "a/b" answers at /a/b and at /a%2Fb, and a long secret is just a long path. fastify routes
 * "/:secret": a parameter holds no raw "/" and is at most maxParamLength (100) characters long, else
 * every request is answered 414.
 */

/** Router options that let the whole secret fit in one parameter, in any percent-encoded form. */
export function secretRouterOptions(secret: string): { maxParamLength: number } {
  // Percent-encoding every byte triples the length.
  return { maxParamLength: Math.max(DEFAULT_MAX_PARAM_LENGTH, 3 * Buffer.byteLength(secret, 'utf8')) };
}

const encodedSlashes = (segment: string) => segment.match(/%2f/gi)?.length ?? 0;

/**
 * For a secret holding "/": a rewrite that joins the raw path segments the secret spans into one
 * segment ("/a/b/parts" -> "/a%2Fb/parts"), so "/:secret" routes receive the decoded secret and the
 * guard compares it as usual. It counts slashes only and never compares the secret itself, so its
 * timing reveals nothing about it. Undefined for any other secret (no rewrite is needed).
 */
export function secretUrlRewrite(secret: string): ((url: string) => string) | undefined {
  const slashes = secret.split('/').length - 1;
  if (slashes === 0) return undefined;
  return (url) => {
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? '' : url.slice(q);
    const prefix = /^\/api\//i.test(path) ? path.slice(0, 5) : '/';
    const segments = path.slice(prefix.length).split('/');
    let joined = segments[0] ?? '';
    let count = encodedSlashes(joined);
    let used = 1;
    while (count < slashes && used < segments.length) {
      const next = segments[used++]!;
      joined += `%2F${next}`;
      count += 1 + encodedSlashes(next);
    }
    if (used === 1) return url;
    const rest = segments.slice(used);
    return `${prefix}${[joined, ...rest].join('/')}${query}`;
  };
}

/** The secret as it is written in a URL path (for the start line and the docs). */
export function secretPath(secret: string): string {
  return encodeURIComponent(secret);
}
