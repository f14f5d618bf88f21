import { hash, timingSafeEqual } from 'node:crypto';

// One-shot hashing (no Hash object); used for Basic auth, not on every intake request.
const digest = (s: string) => hash('sha256', s, 'buffer');

/** Equality in constant time for any lengths: both sides are hashed to 32 bytes first. */
export function constantTimeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * The secret URL segment check; the router matches any segment, so timing never depends on the secret's
 * contents. Only its length can show (comparing buffers is cheaper than hashing on every request).
 */
export function makeSecretCheck(secret: string): (candidate: string | undefined) => boolean {
  const expected = Buffer.from(secret, 'utf8');
  return (candidate) => {
    const got = Buffer.from(candidate ?? '', 'utf8');
    if (got.length !== expected.length) {
      timingSafeEqual(expected, expected);
      return false;
    }
    return timingSafeEqual(got, expected);
  };
}

export function basicAuthMatches(header: string | undefined, user: string, pass: string): boolean {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  const decoded = m ? Buffer.from(m[1]!, 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  const gotUser = colon >= 0 ? decoded.slice(0, colon) : '';
  const gotPass = colon >= 0 ? decoded.slice(colon + 1) : '';
  // Evaluate both comparisons always, so timing does not reveal which one failed.
  const userOk = constantTimeEqual(gotUser, user);
  const passOk = constantTimeEqual(gotPass, pass);
  return m !== null && userOk && passOk;
}
