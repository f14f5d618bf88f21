import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Equality in constant time for any lengths: both sides are hashed to 32 bytes first. */
export function constantTimeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/** The secret URL segment check; the router matches any segment, so timing never depends on the secret. */
export function makeSecretCheck(secret: string): (candidate: string | undefined) => boolean {
  const expected = digest(secret);
  return (candidate) => timingSafeEqual(digest(candidate ?? ''), expected);
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
