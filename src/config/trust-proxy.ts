import { BlockList, isIP } from 'node:net';
import { z } from 'zod';

/*
 * SERVER_TRUST_PROXY: which hops in front of the relay may say who the client is (X-Forwarded-For).
 * The header is read from the right: each trusted hop vouches for the address to its left, and the first
 * address that no trusted hop vouches for is the client. The leftmost entry is whatever the client wrote,
 * so trusting every hop (fastify's `true`) lets anyone pick their own address.
 */

/** Named ranges, as fastify's trustProxy (proxy-addr) names them. */
const RANGES: Record<string, ReadonlyArray<readonly [string, number, 'ipv4' | 'ipv6']>> = {
  loopback: [['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']],
  linklocal: [['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']],
  uniquelocal: [['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['fc00::', 7, 'ipv6']],
};

/** One entry of an address list: an address, a CIDR range, or a named range; undefined when it is none. */
function entryProblem(entry: string): string | undefined {
  if (entry in RANGES || isIP(entry)) return undefined;
  const slash = entry.lastIndexOf('/');
  const family = slash > 0 ? isIP(entry.slice(0, slash)) : 0;
  const bits = Number(entry.slice(slash + 1));
  if (family && /^\d+$/.test(entry.slice(slash + 1)) && bits <= (family === 4 ? 32 : 128)) return undefined;
  return `"${entry}" is not an address, a range such as 10.0.0.0/8, or one of ${Object.keys(RANGES).join(', ')}`;
}

const addressList = z.array(z.string().trim()).superRefine((entries, ctx) => {
  entries.forEach((entry, i) => {
    const problem = entryProblem(entry);
    if (problem) ctx.addIssue({ code: 'custom', path: [i], message: problem });
  });
});

/**
 * false (default): X-Forwarded-For is ignored. true: one hop, the proxy the relay's connection comes from,
 * and only when that address is loopback or a private network (a proxy on this machine, in Docker or on the
 * LAN). A number: that many hops, whatever their address. An address list (array, or one string with
 * commas): exactly those proxies.
 */
export const trustProxySchema = z
  .union([
    z.boolean(),
    z.number().int().min(0).max(32),
    z.string().transform((s) => s.split(',')).pipe(addressList),
    addressList,
  ])
  .default(false);

export type TrustProxy = z.infer<typeof trustProxySchema>;

function blockList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const named = RANGES[entry];
    if (named) {
      for (const [net, bits, family] of named) list.addSubnet(net, bits, family);
      continue;
    }
    const slash = entry.lastIndexOf('/');
    if (slash > 0) {
      const net = entry.slice(0, slash);
      list.addSubnet(net, Number(entry.slice(slash + 1)), isIP(net) === 6 ? 'ipv6' : 'ipv4');
    } else list.addAddress(entry, isIP(entry) === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}

/** An IPv4 address in IPv6 form (a dual-stack socket's `::ffff:10.0.0.1`) checked as IPv4. */
function contains(list: BlockList, address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const plain = mapped ? mapped[1]! : address;
  const family = isIP(plain);
  return family !== 0 && list.check(plain, family === 6 ? 'ipv6' : 'ipv4');
}

const PRIVATE = blockList(Object.keys(RANGES));
const HOME = blockList(['loopback', 'uniquelocal']);

/**
 * Whether a client address is this machine or a home network: loopback, RFC 1918 (10/8, 172.16/12, 192.168/16)
 * or an IPv6 unique local address (fc00::/7), an IPv4 one in IPv6 form (::ffff:10.0.0.5) as IPv4.
 */
export function isHomeAddress(address: string): boolean {
  return contains(HOME, address);
}

/**
 * The trust function for fastify's `trustProxy`: (address of a hop, its index from the relay, 0 = the
 * connection's peer) -> may it vouch for the next address to its left. false when nothing is trusted.
 */
export function trustFunction(value: TrustProxy): false | ((address: string, hop: number) => boolean) {
  if (value === false || value === 0) return false;
  if (value === true) return (address, hop) => hop === 0 && contains(PRIVATE, address);
  if (typeof value === 'number') return (_address, hop) => hop < value;
  if (value.length === 0) return false;
  const list = blockList(value);
  return (address) => contains(list, address);
}

/** What SERVER_TRUST_PROXY means, for the start-up log. */
export function describeTrustProxy(value: TrustProxy): string | undefined {
  if (value === false || value === 0 || (Array.isArray(value) && value.length === 0)) return undefined;
  if (value === true) return 'SERVER_TRUST_PROXY true: the client address is the one the nearest proxy saw (the last X-Forwarded-For entry), and only when that proxy connects from loopback or a private network';
  if (typeof value === 'number') return `SERVER_TRUST_PROXY ${value}: the client address is the one ${value} proxy hop(s) in front of the relay saw`;
  return `SERVER_TRUST_PROXY: X-Forwarded-For is read through the proxies ${value.join(', ')} only`;
}
