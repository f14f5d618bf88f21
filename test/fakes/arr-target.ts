import { RecordingServer, type FakeAnswer, type RecordedCall } from './recording-server.ts';

/**
 * A fake Sonarr or Radarr (API v3) on 127.0.0.1, for the *arr targets. Based on Sonarr at 49df353 and Radarr
 * at 1b9662d: Sonarr.Http/Authentication/ApiKeyAuthenticationHandler (the key in `X-Api-Key` or `?apikey=`,
 * else 401), `GET /api/v3/series` / `/api/v3/movie` (SeriesResource / MovieResource, with `id` and `path`),
 * `GET /api/v3/rootfolder`, `GET /api/v3/system/status`, and CommandController.StartCommand (`POST
 * /api/v3/command` `{"name": ...}` -> 201 with the queued command). Sonarr's RefreshSeriesCommand fills
 * `seriesIds` from `seriesId`; Radarr's RefreshMovieCommand takes `movieIds`. An empty list refreshes every
 * series or movie (UpdateScheduledTask), which the fake records as `all`. Autopulse's sonarr.rs:56-98 and
 * radarr.rs:56-101 make the same calls.
 */
export interface ArrFakeItem {
  id: number;
  title: string;
  path: string;
}

export class FakeArrTarget extends RecordingServer {
  items: ArrFakeItem[] = [];
  rootFolders: string[] = [];
  /** Refresh commands taken: the ids, or 'all'. */
  readonly refreshes: Array<{ name: string; ids: number[] | 'all' }> = [];
  private nextCommand = 1;

  constructor(
    readonly product: 'sonarr' | 'radarr',
    readonly apiKey = 'arr-key',
  ) {
    super();
  }

  protected answer(call: RecordedCall): FakeAnswer {
    if (!call.path.startsWith('/api/')) return { status: 404 };
    const key = (call.headers['x-api-key'] as string | undefined) ?? call.query.get('apikey') ?? undefined;
    if (key !== this.apiKey) return { status: 401 };
    const list = this.product === 'sonarr' ? '/api/v3/series' : '/api/v3/movie';
    if (call.method === 'GET' && call.path === list) return { status: 200, body: this.items.map((i) => ({ ...i, monitored: true, rootFolderPath: i.path.replace(/\/[^/]+$/, '') })) };
    if (call.method === 'GET' && call.path === '/api/v3/rootfolder') return { status: 200, body: this.rootFolders.map((path, i) => ({ id: i + 1, path, accessible: true, freeSpace: 1 })) };
    if (call.method === 'GET' && call.path === '/api/v3/system/status') return { status: 200, body: { appName: this.product === 'sonarr' ? 'Sonarr' : 'Radarr', version: '4.0.0.0' } };
    if (call.method === 'POST' && call.path === '/api/v3/command') {
      const body = (call.body ?? {}) as Record<string, unknown>;
      const name = String(body.name ?? '');
      const expected = this.product === 'sonarr' ? 'refreshseries' : 'refreshmovie';
      if (name.toLowerCase() !== expected) return { status: 500, body: { message: 'Sequence contains no matching element' } };
      const ids =
        this.product === 'sonarr'
          ? Array.isArray(body.seriesIds) && body.seriesIds.length
            ? (body.seriesIds as number[])
            : typeof body.seriesId === 'number' && body.seriesId !== 0
              ? [body.seriesId]
              : []
          : Array.isArray(body.movieIds)
            ? (body.movieIds as number[])
            : [];
      this.refreshes.push({ name, ids: ids.length ? ids : 'all' });
      const id = this.nextCommand++;
      return { status: 201, body: { id, name, commandName: this.product === 'sonarr' ? 'Refresh Series' : 'Refresh Movie', status: 'queued', priority: 'normal', trigger: 'manual' } };
    }
    return { status: 404 };
  }
}
