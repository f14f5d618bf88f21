import { z } from 'zod';
import type { RelayTarget } from './schema.ts';
import { hashFor } from '../../core/file-hash.ts';
import type { ScanItem, Target } from '../../core/scan.ts';
import type { Logger } from '../../core/logger.ts';
import { parseJsonAnswer, ServiceClient, TargetError } from '../http.ts';
import { pathsOf } from '../path-match.ts';
import { serviceTarget } from '../service-target.ts';

/** A scanrelay's answer to a manual scan (intake/submit.ts): `queued`, `merged` or `ignored` and why. */
const scanrelayAnswer = z.looseObject({ status: z.string(), scans: z.array(z.looseObject({ reason: z.string().optional() })).optional() });

/** What the other scanrelay did with the scan; an answer it cannot read still means it took the scan (2xx). */
function scanrelayDetail(text: string): string {
  try {
    const answer = parseJsonAnswer(text, scanrelayAnswer, 'scanrelay manual scan');
    const reason = answer.scans?.[0]?.reason;
    return `scanrelay: ${answer.status}${reason ? ` (${reason})` : ''}`;
  } catch {
    return 'scanrelay: accepted';
  }
}

/** One request the relay target makes: method and path (with its query) on the peer. */
export interface RelayRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: Record<string, string>;
}

/**
 * The requests that hand one scan to the peer:
 * - scanrelay: `POST /<SERVER_PASS>` with `{"eventType": "Manual", "filepath": <folder>}` (its manual API);
 * - autopulse: `GET /triggers/<TRIGGER>?path=<path>` per path, a file or a folder, with `&hash=` where the request
 *   that queued the file gave one (autopulse's autopulse.rs:43-56);
 * - autoscan: `POST /triggers/manual?dir=<folder>` (autoscan's triggers/manual/manual.go:49-94 scans on POST;
 *   GET answers its HTML page).
 */
export function relayRequests(entry: Pick<RelayTarget, 'PEER' | 'SECRET' | 'TRIGGER'>, item: ScanItem): RelayRequest[] {
  switch (entry.PEER) {
    case 'scanrelay':
      return [{ method: 'POST', path: `/${encodeURIComponent(entry.SECRET ?? '')}`, body: { eventType: 'Manual', filepath: item.folder } }];
    case 'autopulse':
      return pathsOf(item).map((path) => {
        const hash = hashFor(item, path);
        return { method: 'GET' as const, path: `/triggers/${entry.TRIGGER}?${new URLSearchParams({ path, ...(hash !== undefined ? { hash } : {}) })}` };
      });
    case 'autoscan':
      return [{ method: 'POST', path: `/triggers/manual?${new URLSearchParams({ dir: item.folder })}` }];
  }
}

/**
 * Another relay as a target: hands it the folder (autopulse's targets/autopulse.rs), with Basic auth when
 * USERNAME and PASSWORD are set. A scanrelay answers 404 to a wrong secret, so there 404 is an auth problem.
 */
export function createRelayTarget(name: string, entry: RelayTarget, log: Logger): Target {
  const product = { scanrelay: 'scanrelay', autopulse: 'autopulse', autoscan: 'autoscan' }[entry.PEER];
  const basic: Record<string, string> = entry.USERNAME !== undefined ? { Authorization: `Basic ${Buffer.from(`${entry.USERNAME}:${entry.PASSWORD ?? ''}`).toString('base64')}` } : {};
  const client = new ServiceClient({
    product,
    url: entry.URL,
    request: entry.REQUEST,
    headers: basic,
    secrets: [entry.SECRET, entry.PASSWORD],
    status:
      entry.PEER === 'scanrelay'
        ? (status, what) => (status === 404 ? new TargetError('auth', `${what} answered HTTP 404: check SECRET (the other relay's SERVER_PASS)`, status) : undefined)
        : undefined,
  });
  return serviceTarget(name, entry, {
    async send(item) {
      let detail = '';
      const requests = relayRequests(entry, item);
      for (const req of requests) {
        log.debug({ target: name, scan: item.id, peer: entry.PEER, method: req.method, folder: item.folder }, `handing the scan to ${product}`);
        const text = await client.call(req.method, req.path, 'manual scan', req.body);
        if (entry.PEER === 'scanrelay') detail = scanrelayDetail(text);
      }
      return { outcome: 'done', detail: detail || `${requests.length} request(s) accepted by ${product}` };
    },
    // Every peer serves something at /health (autoscan, scanrelay) or at least answers HTTP (autopulse).
    probe: () => client.call('GET', entry.PEER === 'autopulse' ? '/stats' : '/health', 'health check'),
  });
}
