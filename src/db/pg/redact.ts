/**
 * A database URL as it may be shown (logs, `scanrelay queue`, errors): every form of password node-postgres
 * accepts is replaced by ***:
 * - the `password` query parameter (postgres://relay@host/db?password=PW);
 * - the password in the userinfo (postgres://relay:PW@host/db), taken up to the LAST '@', so an unencoded '@'
 *   (or '/', '?', '#') in the password hides all of it, never leaves its tail in view.
 * Errs on the side of hiding: a '@' later in the URL hides what is before it as well.
 */
export function redactUrl(url: string): string {
  // The parameter first: an '@' in its value must not be taken for the end of the userinfo.
  const masked = url.replace(/([?&]password=)[^&#]*/gi, '$1***');
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(masked);
  if (!scheme) return masked;
  const rest = masked.slice(scheme[0].length);
  const at = rest.lastIndexOf('@');
  if (at < 0) return masked;
  const userinfo = rest.slice(0, at);
  const colon = userinfo.indexOf(':');
  // No ':' before the '@': a user name alone (a '/' in it means the '@' was past the host: hide it all).
  if (colon < 0) return /[/?#]/.test(userinfo) ? `${scheme[0]}***@${rest.slice(at + 1)}` : masked;
  return `${scheme[0]}${userinfo.slice(0, colon)}:***@${rest.slice(at + 1)}`;
}
