import { BlockList, isIP } from 'node:net';
import type { PlexSettings } from './settings.ts';

/** Where a Plex server is and whether its certificate is to be checked (its entry's URL and REQUEST.VERIFY_SSL). */
export type PlexAddress = Pick<PlexSettings, 'URL'> & { REQUEST: Pick<PlexSettings['REQUEST'], 'VERIFY_SSL'> };
import { PlexApi } from './api.ts';

/*
 * Whether scanrelay checks the TLS certificate of an https PLEX_LOCAL_URL. Plex's own certificate names
 * `<hash>.plex.direct`, so no check can pass for `https://127.0.0.1:32400` or a LAN address; plex_autoscan's
 * Plex check never verified (plex.py:615-617, verify=False). Without a PLEX_VERIFY_SSL key, a loopback or
 * private address is not checked and a public one is; an explicit key always wins.
 */

export type TlsPolicy =
  | { verify: boolean; why: 'key' }
  | { verify: false; why: 'loopback' | 'private' }
  | { verify: true; why: 'public' }
  /** http:// (nothing to check) or a URL that does not parse (the client reports it). */
  | { verify: true; why: 'not-https' };

/** Loopback, private (RFC 1918, RFC 4193), link-local and shared (RFC 6598) ranges. */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
const PRIVATE = new BlockList();
for (const [net, bits] of [['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['169.254.0.0', 16], ['100.64.0.0', 10]] as const) PRIVATE.addSubnet(net, bits, 'ipv4');
PRIVATE.addSubnet('fc00::', 7, 'ipv6');
PRIVATE.addSubnet('fe80::', 10, 'ipv6');

/**
 * Where a host is. Names: `localhost` is loopback; a name without a dot (a Docker service such as `plex`, a
 * LAN host) and the local-only suffixes `.local`, `.lan`, `.home.arpa`, `.internal` are private; any other
 * name is public (`*.plex.direct` included: its certificate passes the check).
 */
export function hostKind(host: string): 'loopback' | 'private' | 'public' {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  const family = isIP(h);
  if (family) {
    const type = family === 4 ? 'ipv4' : 'ipv6';
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h)?.[1];
    if (mapped) return hostKind(mapped);
    if (LOOPBACK.check(h, type)) return 'loopback';
    return PRIVATE.check(h, type) ? 'private' : 'public';
  }
  if (h === 'localhost' || h.endsWith('.localhost')) return 'loopback';
  if (!h.replace(/\.$/, '').includes('.') || /\.(local|lan|home\.arpa|internal)\.?$/.test(h)) return 'private';
  return 'public';
}

export function plexTlsPolicy(config: PlexAddress): TlsPolicy {
  if (config.REQUEST.VERIFY_SSL !== undefined) return { verify: config.REQUEST.VERIFY_SSL, why: 'key' };
  let url: URL;
  try {
    url = new URL(config.URL);
  } catch {
    return { verify: true, why: 'not-https' };
  }
  if (url.protocol !== 'https:') return { verify: true, why: 'not-https' };
  const kind = hostKind(url.hostname);
  return kind === 'public' ? { verify: true, why: 'public' } : { verify: false, why: kind };
}

/** The Plex API client for a config: PLEX_LOCAL_URL, PLEX_TOKEN, and the certificate check above. */
export function plexApiFor(config: PlexAddress & Pick<PlexSettings, 'TOKEN'>): PlexApi {
  return new PlexApi(config.URL, config.TOKEN, { verifyTls: plexTlsPolicy(config).verify });
}

/** The start-up line when the certificate goes unchecked because of the address (undefined otherwise). */
export function unverifiedNotice(config: PlexAddress): string | undefined {
  const policy = plexTlsPolicy(config);
  if (policy.why !== 'loopback' && policy.why !== 'private') return undefined;
  return `PLEX_LOCAL_URL ${config.URL} is a ${policy.why} address: Plex's TLS certificate is not checked (it names *.plex.direct, never this address); set PLEX_VERIFY_SSL to true to check it`;
}
