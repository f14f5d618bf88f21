import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import { FakeMediaServer } from '../fakes/jellyfin.ts';
import { FakePlex } from '../fakes/plex.ts';
import { post, postJson, waitFor, type HttpAnswer } from './relay.ts';

/*
 * The set-up the named-targets end-to-end tests share (all-targets, named-targets, item-actions): a relay behind
 * basic auth that sends at once, two Plex servers with their own libraries and tokens, a Jellyfin, the requests
 * each trigger takes, and the deliveries as the queue recorded them.
 */

export const AUTH = { authorization: `Basic ${Buffer.from('user:pass').toString('base64')}` };

/** Config keys of a relay behind AUTH that sends each scan as soon as it is queued. */
export const RELAY_BASE = { SERVER_AUTH_USER: 'user', SERVER_AUTH_PASS: 'pass', SERVER_SCAN_DELAY: 0 };

/**
 * Issue 39's two Plex servers: the main one (the PLEX_* keys, libraries under /plexA) and a 4K one (a TARGETS
 * entry, under /4k, its own token). Each shows a scan as running for a while, so a second scan sent meanwhile is
 * seen (FakePlex's `whileBusy`): each must get one at a time.
 */
export async function startTwoPlex(): Promise<{ plex: FakePlex; plex4k: FakePlex }> {
  const [plex, plex4k] = await Promise.all([
    new FakePlex({
      sections: [
        { id: '1', title: 'Movies', type: 'movie', locations: ['/plexA/Movies'] },
        { id: '2', title: 'TV Shows', type: 'show', locations: ['/plexA/TV'] },
      ],
    }).start(),
    new FakePlex({
      token: 'plex-4k-token',
      sections: [
        { id: '7', title: 'Movies 4K', type: 'movie', locations: ['/4k/Movies'] },
        { id: '8', title: 'TV 4K', type: 'show', locations: ['/4k/TV'] },
      ],
    }).start(),
  ]);
  plex.scanActivityMs = 150;
  plex4k.scanActivityMs = 150;
  return { plex, plex4k };
}

/** The main Plex as the top-level keys name it, its paths /data -> /plexA. */
export const mainPlexKeys = (plex: FakePlex) => ({ PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, PLEX_REWRITE: [{ from: '^/data/', to: '/plexA/' }] });

/** The 4K Plex as a TARGETS entry, its paths /data -> /4k. */
export const plex4kTarget = (plex4k: FakePlex, extra: Record<string, unknown> = {}) => ({
  TYPE: 'plex',
  URL: plex4k.url,
  TOKEN: plex4k.token,
  ANALYZE_TYPE: 'off',
  REWRITE: [{ from: '^/data/', to: '/4k/' }],
  ...extra,
});

/** A Jellyfin with the key `jf-key` and these libraries (name -> folders). */
export async function startJellyfin(libraries: Record<string, string[]>): Promise<FakeMediaServer> {
  const jellyfin = await new FakeMediaServer({ apiKey: 'jf-key', name: 'jellyfin' }).start();
  jellyfin.virtualFolders = Object.entries(libraries).map(([Name, Locations]) => ({ Name, Locations }));
  return jellyfin;
}

/** That Jellyfin as a TARGETS entry that takes only its TV library (INCLUDE on its own path, /data -> /media). */
export const jellyfinTvTarget = (jellyfin: FakeMediaServer) => ({
  TYPE: 'jellyfin',
  URL: jellyfin.url,
  API_KEY: 'jf-key',
  REWRITE: [{ from: '^/data/', to: '/media/' }],
  INCLUDE: ['^/media/TV/'],
});

/** The requests each trigger takes, sent with AUTH to the relay at `base`. */
export function triggers(base: string) {
  return {
    sonarr: (seriesPath: string, relativePath: string): Promise<HttpAnswer> =>
      postJson(`${base}/triggers/sonarr`, { eventType: 'Download', series: { path: seriesPath }, episodeFile: { relativePath } }, AUTH),
    radarr: (folderPath: string, relativePath: string): Promise<HttpAnswer> =>
      postJson(`${base}/triggers/radarr`, { eventType: 'Download', movie: { folderPath }, movieFile: { relativePath } }, AUTH),
    /** autoscan's manual route: `dir`, and more query fields (`action=refresh`). */
    manual: (dir: string, query = ''): Promise<HttpAnswer> =>
      post(`${base}/triggers/manual?dir=${encodeURIComponent(dir)}${query ? `&${query}` : ''}`, '', 'application/x-www-form-urlencoded', AUTH),
    aTrain: (drive: string, created: string[]): Promise<HttpAnswer> => postJson(`${base}/triggers/a-train/${drive}`, { Created: created }, AUTH),
  };
}

/**
 * Issue 39's requests, the same in each test of named targets: Sonarr's episode, two Radarr movies, a manual
 * folder and two A-Train folders (its check sends Sonarr, Radarr, manual and A-Train requests).
 */
export function issue39Requests(base: string): Array<Promise<HttpAnswer>> {
  const send = triggers(base);
  return [
    send.sonarr('/data/TV/Severance', 'Season 2/Severance.S02E01.mkv'),
    send.radarr('/data/Movies/Box (2001)', 'Box (2001).mkv'),
    send.radarr('/data/Movies/Up (2009)', 'Up (2009).mkv'),
    send.manual('/data/Movies/Heat (1995)'),
    send.aTrain('drive1', ['/data/TV/Dark/Season 1', '/data/Movies/Alien (1979)']),
  ];
}

/**
 * What issue39Requests bring the two Plex servers when Sonarr's trigger names `plex`, Radarr's excludes neither,
 * manual's and A-Train's name `plex4k`: exactly these scans, in each one's own path form, with its own token, and
 * one at a time (none sent while that server still scanned another).
 */
export async function assertEachPlexGotItsOwn(plex: FakePlex, plex4k: FakePlex): Promise<void> {
  assert.deepEqual(plex.refreshes().map((r) => `${r.section} ${r.path}`).sort(), ['1 /plexA/Movies/Box (2001)', '1 /plexA/Movies/Up (2009)', '2 /plexA/TV/Severance/Season 2']);
  assert.deepEqual(plex4k.refreshes().map((r) => `${r.section} ${r.path}`).sort(), [
    '7 /4k/Movies/Alien (1979)',
    '7 /4k/Movies/Box (2001)',
    '7 /4k/Movies/Heat (1995)',
    '7 /4k/Movies/Up (2009)',
    '8 /4k/TV/Dark/Season 1',
  ]);
  assert.ok(plex4k.refreshes().every((r) => r.token === plex4k.token));
  assert.ok(plex.refreshes().every((r) => r.token === plex.token));
  await waitFor(() => [...plex.scans, ...plex4k.scans].every((s) => s.endedAt !== undefined), 60_000, 'Plex scans ended');
  assert.deepEqual(plex.scans.filter((s) => s.whileBusy), []);
  assert.deepEqual(plex4k.scans.filter((s) => s.whileBusy), []);
}

/**
 * What issue39Requests bring the two Plex servers and the Jellyfin `jf` (TV only), by the same triggers, as the queue
 * records them: `<target> <folder>`, each once.
 */
export const ISSUE39_SERVER_DELIVERIES = [
  'jf /data/TV/Dark/Season 1',
  'jf /data/TV/Severance/Season 2',
  'plex /data/Movies/Box (2001)',
  'plex /data/Movies/Up (2009)',
  'plex /data/TV/Severance/Season 2',
  'plex4k /data/Movies/Alien (1979)',
  'plex4k /data/Movies/Box (2001)',
  'plex4k /data/Movies/Heat (1995)',
  'plex4k /data/Movies/Up (2009)',
  'plex4k /data/TV/Dark/Season 1',
];

export interface DeliveryRecord {
  folder: string;
  target: string;
  status: string;
  /** The scan's action: `scan`, `refresh` or `analyze`. */
  action: string;
  detail: string | null;
}

/** Every delivery the relay's queue file holds, with its scan's folder and action. */
export function deliveryRows(queuefile: string): DeliveryRecord[] {
  const db = new Database(queuefile, { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare(`SELECT s.folder, d.target, d.status, coalesce(s.action, 'scan') AS action, d.detail FROM deliveries d JOIN scans s ON s.id = d.scan_id ORDER BY s.id, d.target`)
      .all() as DeliveryRecord[];
  } finally {
    db.close();
  }
}
