import type { NotificationConfig } from '../config/notifications.ts';

/**
 * A destination's URL as logs, the dashboard and errors show it: scheme and host only. A webhook URL is a
 * credential (Discord's and hookshot's carry their token in the path, ntfy's topic is its password).
 */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}/…`;
  } catch {
    return '…';
  }
}

/** Text (an error message, a service's answer) with the destination's URL, path and token taken out. */
export function scrub(text: string, dest: Pick<NotificationConfig, 'URL' | 'TOKEN'>): string {
  const secrets = [dest.URL, dest.TOKEN];
  try {
    const u = new URL(dest.URL);
    if (u.pathname.length > 1) secrets.push(u.pathname, u.pathname.slice(1), decodeURIComponent(u.pathname));
    if (u.search) secrets.push(u.search.slice(1));
    if (u.password) secrets.push(u.password);
  } catch {
    // Not a URL: the whole string is replaced above.
  }
  let out = text;
  for (const s of secrets.filter((x) => x.length >= 4).sort((a, b) => b.length - a.length)) out = out.split(s).join('…');
  return out;
}
